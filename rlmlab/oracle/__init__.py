"""Code oracles that verify an agent's FINAL answers about source code, and golden-trace output.

:func:`read_question` reads what a question asks (an :class:`Intent`: kind, targets, scope, rules) from general
English and the names the source defines. Query kinds route to oracles (:mod:`._classify`): pattern-match ->
:class:`GrepOracle`, structural -> :class:`TreeSitterOracle`, semantic -> unverified (or
:class:`SelfConsistencyOracle` consensus); a question the reader cannot decide is unverified.
:class:`TraceValidator` turns executor trajectories into golden JSONL records.
"""

from rlmlab.oracle._batch import EXTRACTIONS, extract_files
from rlmlab.oracle._classify import QUERY_RULES, QueryClassifier, QueryKind, QueryRule, classify_query
from rlmlab.oracle._extract_cache import ExtractionCache
from rlmlab.oracle._consistency import ConsensusResult, SelfConsistencyOracle, answer_similarity
from rlmlab.oracle._grep import (
    CODE_LINE, INTENT_PATTERNS, GrepClaim, GrepOracle, GrepResult, GrepVerification, is_count_query, parse_claim,
    parse_claims, pattern_for_intent, pattern_for_query,
)
from rlmlab.oracle._answers import says_nothing
from rlmlab.oracle._question import Intent, read_question
from rlmlab.oracle._records import GOLDEN_FIELDS, AnalysisResult, GoldenTrace, MalformedLine, read_analysis_results
from rlmlab.oracle._source import ParseCache, SourceEntry
from rlmlab.oracle._structural import STRUCTURAL_ASPECTS, StructuralResult, structural_target, verify_structural
from rlmlab.oracle._treesitter import (
    AstMatch, AstQueryError, EnumInfo, ErrorPatternCounts, FieldInfo, FunctionInfo, ImplInfo, Param, StructInfo,
    TraitInfo, TreeSitterOracle, VariantInfo,
)
from rlmlab.oracle._validator import (
    ORACLES, OraclePlugin, OracleResult, ResultWriter, SourceMissing, TraceValidator, ValidationStats,
)
from rlmlab.oracle._verdicts import GOOD_VERDICTS, CannotVerify, Verification

__all__ = [
    "read_question", "says_nothing",
    "GrepOracle", "GrepResult", "GrepVerification", "CODE_LINE", "INTENT_PATTERNS", "pattern_for_query", "pattern_for_intent",
    "GrepClaim", "parse_claim", "parse_claims", "is_count_query",
    "ParseCache", "StructuralResult", "structural_target", "verify_structural",
    "extract_files", "ExtractionCache", "TreeSitterOracle", "AstQueryError", "FieldInfo",
    "GOOD_VERDICTS", "CannotVerify", "Verification",
    "QUERY_RULES", "QueryKind", "QueryRule", "classify_query",
    "SelfConsistencyOracle",
    "GOLDEN_FIELDS", "AnalysisResult", "GoldenTrace", "MalformedLine", "read_analysis_results",
    "ORACLES", "OraclePlugin", "OracleResult", "ResultWriter", "SourceMissing", "TraceValidator",
]
