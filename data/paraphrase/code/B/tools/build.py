import json, hashlib, os, glob
VER = {"log":"0.4.17","memchr":"2.5.0","indexmap":"1.9.2","http":"0.2.7","once_cell":"1.17.0","anyhow":"1.0.69","hashbrown":"0.12.3","lock_api":"0.4.9","parking_lot":"0.12.1"}
Q = []
def q(level, crate, source, query, checker, expected, kind, scope, targets, rules, method, check):
    Q.append(dict(id="pc-B-%03d" % (len(Q)+1), suite="code", level=level, query=query, checker=checker,
                  expected=expected, domain="crate:"+crate, crate_version=VER[crate], source=source, kind=kind,
                  scope=scope, targets=targets, rules=rules, writer="B", method=method, check=check))

# ---------------- L1 ----------------
q(1,"log","lib.rs",
  "What is the full signature of `set_logger_racy` in the log crate's lib.rs? Give it from the `pub` keyword up to (not including) the opening brace, with whitespace collapsed to single spaces.",
  "exact","pub unsafe fn set_logger_racy(logger: &'static dyn Log) -> Result<(), SetLoggerError>",
  "signature","file",["set_logger_racy"],"",
  "grep -n 'fn set_logger_racy' lib.rs (line 1521), copied header up to '{'",
  "ctags -x function entry for set_logger_racy shows the same one-line header; only one definition in the file")
q(1,"http","request.rs",
  "request.rs defines a `Parts` struct for the request head. Name all of its fields, including any private ones.",
  "set",["method","uri","version","headers","extensions","_priv"],
  "fields","file",["Parts"],"all fields incl. private",
  "read struct Parts at request.rs:166-183",
  "ctags --kinds-Rust=m on request.rs, fields on lines 168-182: same 6 names")
q(1,"http","uri/mod.rs",
  "In http's uri/mod.rs there's a private `ErrorKind` enum. What are its variants? names only please",
  "set",["InvalidUriChar","InvalidScheme","InvalidAuthority","InvalidPort","InvalidFormat","SchemeMissing","AuthorityMissing","PathAndQueryMissing","TooLong","Empty","SchemeTooLong"],
  "variants","file",["ErrorKind"],"",
  "sed -n 128,141p uri/mod.rs",
  "ctags --kinds-Rust=e listed the same 11 enumerators (lines 130-140)")
q(1,"anyhow","error.rs",
  "what's the return type of `Error::root_cause` in anyhow's error.rs? give it exactly as written in the source",
  "exact",["&(dyn StdError + 'static)"],
  "return_type","file",["root_cause"],"",
  "grep -n 'fn root_cause' error.rs -> line 402",
  "grep across all anyhow src files: single definition, same header text")
q(1,"indexmap","map.rs",
  "Give me the signature of IndexMap's `swap_remove_full` method in map.rs: everything from `pub` up to the opening `{`, including the where clause, whitespace collapsed to single spaces.",
  "exact",["pub fn swap_remove_full<Q: ?Sized>(&mut self, key: &Q) -> Option<(usize, K, V)> where Q: Hash + Equivalent<K>,",
           "pub fn swap_remove_full<Q: ?Sized>(&mut self, key: &Q) -> Option<(usize, K, V)> where Q: Hash + Equivalent<K>"],
  "signature","file",["swap_remove_full"],"where clause included",
  "grep -n -A3 'fn swap_remove_full' map.rs (lines 579-582)",
  "my scanner's fn listing shows one swap_remove_full in map.rs; text re-read by hand")
q(1,"memchr","memchr/mod.rs",
  "Which parameters does the public `memchr3` function in memchr's src/memchr/mod.rs take? Just list the parameter names.",
  "set",["needle1","needle2","needle3","haystack"],
  "parameters","file",["memchr3"],"",
  "sed -n 204,209p memchr/mod.rs",
  "ctags -x shows pub fn memchr3 at line 204 (only one; the inner helper fn is named imp)")
q(1,"parking_lot","once.rs",
  "List the variants of the `OnceState` enum in parking_lot's once.rs.",
  "set",["New","Poisoned","InProgress","Done"],
  "variants","file",["OnceState"],"",
  "grep -n -A12 'enum OnceState' once.rs",
  "ctags --kinds-Rust=e once.rs: Done, InProgress, New, Poisoned")
q(1,"lock_api","remutex.rs",
  "The `GetThreadId` trait in lock_api's remutex.rs has one required method. What is its signature (from `fn` up to the `;`, not including it)?",
  "exact","fn nonzero_thread_id(&self) -> NonZeroUsize",
  "signature","file",["GetThreadId","nonzero_thread_id"],"",
  "grep -n -A12 'trait GetThreadId' remutex.rs (method at line 54)",
  "grep -rn 'fn nonzero_thread_id' over lock_api src: only that declaration")
q(1,"anyhow","chain.rs",
  "Does anyhow's chain.rs implement ExactSizeIterator for `Chain`? yes or no",
  "exact","yes",
  "yes_no","file",["Chain","ExactSizeIterator"],"",
  "grep -n impl chain.rs -> line 76 'impl ExactSizeIterator for Chain<'_>'",
  "my impl scanner lists trait=ExactSizeIterator self=Chain in chain.rs")
q(1,"once_cell","race.rs",
  "Is a `Lazy` type defined in once_cell's race.rs? Answer yes or no.",
  "exact","no",
  "yes_no","file",["Lazy"],"",
  "grep -n Lazy race.rs -> no matches",
  "ctags -x on race.rs: structs are OnceNonZeroUsize, OnceBool, OnceRef, OnceBox only")

# ---------------- L2 ----------------
q(2,"lock_api","rwlock.rs",
  "Which traits are defined in lock_api's rwlock.rs? Give the trait names.",
  "set",["RawRwLock","RawRwLockFair","RawRwLockDowngrade","RawRwLockTimed","RawRwLockRecursive","RawRwLockRecursiveTimed","RawRwLockUpgrade","RawRwLockUpgradeFair","RawRwLockUpgradeDowngrade","RawRwLockUpgradeTimed"],
  "list","file",[],"trait definitions",
  "grep -n 'trait ' rwlock.rs (10 'pub unsafe trait' lines 38-294)",
  "own scanner trait regex over comment-stripped code: same 10")
q(2,"lock_api","rwlock.rs",
  "Count the `unsafe impl` blocks in lock_api/src/rwlock.rs. Answer with a number.",
  "numeric",12,
  "count","file",["unsafe impl"],"",
  "grep -c '^\\s*unsafe impl' rwlock.rs = 12",
  "own comment-stripping scanner: 12 impl headers flagged unsafe (Send/Sync/StableAddress)")
q(2,"http","status.rs",
  "How many `pub fn` functions does http's status.rs define?",
  "numeric",10,
  "count","file",["pub fn"],"only plain pub fn",
  "grep -n 'pub fn' status.rs -> 10 lines (from_u16 ... is_server_error)",
  "own fn scanner: 10 'pub' fns, the only fn inside the status_codes! macro body is private")
q(2,"once_cell","race.rs",
  "In once_cell's race.rs, how many `unsafe { ... }` blocks are there? Don't count `unsafe impl` lines or comments.",
  "numeric",10,
  "count","file",["unsafe"],"unsafe blocks only; no unsafe impl; no comments",
  "regex \\bunsafe\\s*\\{ on comment-stripped code: lines 104,173,206,230,246,299,316,332,378,382",
  "grep -n unsafe race.rs and excluded 2 unsafe impl lines and 1 doc-comment line: 10")
q(2,"anyhow","error.rs",
  "How many functions are declared as `unsafe fn` in anyhow's error.rs? Count function definitions only, not the `unsafe fn(...)` pointer types used for the ErrorVTable fields.",
  "numeric",21,
  "count","file",["unsafe fn"],"definitions only, not fn-pointer types",
  "own fn scanner: 21 defs (construct, 15 free vtable fns object_*/context_*/vtable, 5 ErrorImpl methods)",
  "grep -c 'unsafe fn' error.rs = 29, minus 8 ErrorVTable field lines (592-602) = 21")
q(2,"hashbrown","raw/mod.rs",
  "In hashbrown's raw/mod.rs, which types implement `Iterator` (the trait itself, not IntoIterator/ExactSizeIterator/FusedIterator)?",
  "set",["RawIterRange","RawIter","RawIntoIter","RawDrain","RawIterHash","RawIterHashInner"],
  "implementors","file",["Iterator"],"only Iterator itself",
  "grep -n 'Iterator for' raw/mod.rs, kept the ' Iterator for' lines (1966,2146,2237,2308,2384,2397)",
  "ctags --kinds-Rust=c raw/mod.rs: same six impl Iterator entries")
q(2,"log","lib.rs",
  "Find every line of code in log's lib.rs that uses the `unsafe` keyword (ignore comments and doc comments). Give them as line:text, with 1-based line numbers and the trimmed source line.",
  "set",["393:unsafe impl Sync for AtomicUsize {}",
         "1390:unsafe { mem::transmute(MAX_LOG_LEVEL_FILTER.load(Ordering::Relaxed)) }",
         "1484:unsafe {",
         "1521:pub unsafe fn set_logger_racy(logger: &'static dyn Log) -> Result<(), SetLoggerError> {",
         "1578:unsafe { LOGGER }"],
  "list","file",["unsafe"],"code only, no comments; line:text",
  "python: strip comments/strings, regex \\bunsafe\\b per line, print trimmed original",
  "grep -n unsafe lib.rs: 6 hits, one is the doc comment at 1502 ('thread-unsafe'); remaining 5 agree")
q(2,"parking_lot","once.rs",
  "list the public methods defined on `Once` in parking_lot's once.rs (just names)",
  "set",["new","state","call_once","call_once_force"],
  "list","file",["Once"],"pub methods of impl Once",
  "grep -n 'pub fn\\|pub const fn' once.rs, kept those inside impl Once (85-280)",
  "ctags -x --kinds-Rust=Pc once.rs: impl Once at 85 with new/state/call_once/call_once_force pub, call_once_slow private")

# ---------------- L3 ----------------
q(3,"memchr","memmem",
  "Under memchr's src/memmem/ directory, which files define a struct named `Forward`? Give paths relative to src/memmem/ (e.g. `foo.rs`, `x86/bar.rs`).",
  "set",["genericsimd.rs","twoway.rs","wasm.rs","x86/avx.rs","x86/sse.rs"],
  "list","module",["Forward"],"paths relative to memmem/",
  "grep -rn 'struct Forward' memmem/",
  "ctags -R memmem | grep ^Forward: 6 definitions in these 5 files (x86/avx.rs has two cfg variants)")
q(3,"hashbrown","raw",
  "Across hashbrown's src/raw/ module (all files in that directory), how many `unsafe impl` blocks are there in total? Count each textual occurrence, regardless of cfg attributes.",
  "numeric",14,
  "count","module",["unsafe impl"],"textual count, any cfg",
  "grep -n 'unsafe impl' raw/*.rs: alloc.rs 3 + mod.rs 11",
  "own impl scanner over comment-stripped raw/*.rs: 14 headers flagged unsafe")
q(3,"http","uri",
  "What structs are defined in http's uri module (the files in src/uri/)?",
  "set",["Authority","Builder","Uri","Parts","InvalidUri","InvalidUriParts","PathAndQuery","Port","Scheme"],
  "list","module",[],"structs only",
  "grep -rn 'struct' uri/",
  "ctags -x --kinds-Rust=s uri/*.rs: same 9 names")
q(3,"log","kv",
  "Which traits does the log crate define inside its kv module (src/kv/)?",
  "set",["ToKey","ToValue","Visit","Source","Visitor"],
  "list","module",[],"trait definitions",
  "grep -rn 'trait ' kv/ (excluding comments)",
  "ctags -R --kinds-Rust=i kv: Source, ToKey, ToValue, Visit, Visitor")
q(3,"indexmap","rayon",
  "In indexmap's rayon module (src/rayon/), how many impl blocks implement `ParallelIterator` itself? Don't count IndexedParallelIterator or IntoParallelIterator impls.",
  "numeric",14,
  "count","module",["ParallelIterator"],"exactly ParallelIterator",
  "grep -c 'impl.* ParallelIterator for' rayon/*.rs: map.rs 7, set.rs 7, mod.rs 0",
  "own impl scanner, trait base name == ParallelIterator within rayon/: 14")
q(3,"memchr","memchr",
  "Which files under memchr's src/memchr/ directory contain a function named `memrchr3`? Paths relative to src/memchr/, please.",
  "set",["fallback.rs","mod.rs","naive.rs","x86/avx.rs","x86/mod.rs","x86/sse2.rs"],
  "list","module",["memrchr3"],"paths relative to src/memchr/",
  "grep -rn 'fn memrchr3\\b' memchr/",
  "ctags -R --kinds-Rust=f memchr | grep ^memrchr3: same 6 files; x86/mod.rs one is outside its macro_rules bodies")
q(3,"hashbrown","external_trait_impls/rayon",
  "Looking at hashbrown's external_trait_impls/rayon/ directory: which struct names are defined in both map.rs and set.rs there?",
  "set",["ParIter","IntoParIter","ParDrain"],
  "list","module",[],"struct names present in both files",
  "grep -n 'struct' rayon/map.rs rayon/set.rs and intersected names",
  "ctags -R --kinds-Rust=s external_trait_impls: intersection of map.rs and set.rs structs = IntoParIter, ParDrain, ParIter")

# ---------------- L4 ----------------
q(4,"parking_lot",".",
  "Which types in parking_lot implement lock_api's `RawMutex` trait?",
  "set",["RawMutex","RawFairMutex"],
  "implementors","crate",["RawMutex"],"",
  "grep -rn 'RawMutex for' *.rs -> raw_mutex.rs:58, raw_fair_mutex.rs:14",
  "own impl scanner across the crate: trait=RawMutex for self RawMutex and RawFairMutex only")
q(4,"parking_lot",".",
  "Which lock_api traits does parking_lot's `RawRwLock` type implement? List the trait names without the lock_api:: prefix.",
  "set",["RawRwLock","RawRwLockFair","RawRwLockDowngrade","RawRwLockTimed","RawRwLockRecursive","RawRwLockRecursiveTimed","RawRwLockUpgrade","RawRwLockUpgradeFair","RawRwLockUpgradeDowngrade","RawRwLockUpgradeTimed"],
  "traits_of","crate",["RawRwLock"],"bare trait names",
  "grep -rn 'for RawRwLock' parking_lot src: 10 unsafe impls in raw_rwlock.rs",
  "own impl scanner over all parking_lot files: self=RawRwLock has these 10 traits plus one inherent impl")
q(4,"http",".",
  "Across the http crate, which traits have an explicit impl block whose self type is `HeaderName` itself (not `&HeaderName`)? Ignore #[derive]s. Give bare trait names without paths or generic arguments.",
  "set",["Sealed","IntoHeaderName","AsHeaderName","FromStr","AsRef","Borrow","Debug","Display","From","TryFrom","PartialEq"],
  "traits_of","crate",["HeaderName"],"explicit impls, self exactly HeaderName, bare names",
  "grep -rn 'for HeaderName\\b' src: header/map.rs (Sealed, IntoHeaderName, AsHeaderName) + header/name.rs",
  "own impl scanner, self type string == 'HeaderName' outside tests/macros: same 11 distinct names")
q(4,"log",".",
  "Which traits does `Level` implement through hand-written impl blocks anywhere in the log crate (not counting #[derive])?",
  "set",["Clone","PartialEq","PartialOrd","Ord","FromStr","Display","Serialize","Deserialize"],
  "traits_of","crate",["Level"],"explicit impls only, no derives",
  "grep -rn 'for Level\\b' src: lib.rs (Clone, PartialEq x2, PartialOrd x2, Ord, FromStr, Display) + serde.rs (Serialize, Deserialize)",
  "own impl scanner self=Level: same 8 distinct traits; no other file has impls for Level")
q(4,"log",".",
  "In log, which types implement the standard library's Error trait (`error::Error`)? Type names as written in the impl.",
  "set",["SetLoggerError","ParseLevelError","Error"],
  "implementors","crate",["Error"],"",
  "grep -rn 'Error for' src: lib.rs:1551, lib.rs:1568, kv/error.rs:83 (impl error::Error for Error)",
  "own impl scanner trait base 'Error': same three self types")
q(4,"anyhow",".",
  "List every type in anyhow that has a hand-written `Debug` impl.",
  "set",["Backtrace","BacktraceFrame","BacktraceSymbol","BytesOrWide","ContextError","Quoted","Error","ErrorImpl","MessageError","DisplayError","BoxedError"],
  "implementors","crate",["Debug"],"explicit impls",
  "grep -n 'Debug for' *.rs (excluding doc-comment line error.rs:261 and BothDebug/NotBothDebug)",
  "own impl scanner trait base == Debug: 11 self types across backtrace.rs, context.rs, error.rs, wrapper.rs")
q(4,"once_cell",".",
  "Which once_cell types get a manually written `impl Default` (so not via #[derive(Default)])?",
  "set",["OnceCell","Lazy","OnceRef","OnceBox"],
  "implementors","crate",["Default"],"no derives",
  "grep -n 'Default for' *.rs, dropping the doc-comment example in lib.rs:219",
  "own impl scanner over comment-stripped code: Default impls for OnceCell (x2), Lazy (x2), OnceRef, OnceBox")
q(4,"indexmap",".",
  "indexmap has a crate-private `Entries` trait in lib.rs. Which types implement it?",
  "set",["IndexMap","IndexSet","IndexMapCore"],
  "implementors","crate",["Entries"],"",
  "grep -rn 'Entries for' src: map.rs:100, set.rs:87, map/core.rs:95",
  "own impl scanner across indexmap: same three")
q(4,"hashbrown",".",
  "Across hashbrown's whole source (including external_trait_impls), which traits are implemented for `HashSet` itself, i.e. impls whose self type is HashSet<...> rather than &HashSet<...>? Bare trait names, no generic arguments.",
  "set",["Clone","PartialEq","Eq","Debug","From","FromIterator","Extend","Default","IntoIterator","Serialize","Deserialize","IntoParallelIterator","FromParallelIterator","ParallelExtend"],
  "traits_of","crate",["HashSet"],"self type HashSet, not a reference; bare names",
  "own impl scanner: self type starting with 'HashSet<' outside tests -> set.rs, external_trait_impls/serde.rs, external_trait_impls/rayon/set.rs",
  "grep -rn -B3 'for HashSet<' src: same 14 distinct trait names")

# ---------------- L5 ----------------
q(5,"parking_lot",".",
  "How many `unsafe impl` blocks does parking_lot have, not counting anything inside #[cfg(test)] modules?",
  "numeric",17,
  "count","crate",["unsafe impl"],"excluding cfg(test) modules",
  "grep -n 'unsafe impl' *.rs: 19 hits, 2 are in mutex.rs's #[cfg(test)] mod tests (lines 128-129)",
  "own impl scanner with test-region detection: raw_fair_mutex 3 + raw_mutex 3 + raw_rwlock 10 + remutex 1 = 17")
q(5,"parking_lot",".",
  "Which parking_lot source file declares the most public type aliases (`pub type`)?",
  "exact",["rwlock.rs","src/rwlock.rs"],
  "argmax","crate",["pub type"],"",
  "grep -n 'pub type' *.rs | count per file: rwlock.rs 6, mutex.rs 3, fair_mutex.rs 3, remutex.rs 3",
  "ctags --kinds-Rust=t per file gave the same ranking")
q(5,"hashbrown",".",
  "In hashbrown, which trait has the most impl blocks across the whole crate? Ignore #[cfg(test)] code.",
  "exact","Debug",
  "argmax","crate",[],"excluding tests",
  "own impl scanner over all files: Debug 43, Iterator 25, FusedIterator 22, Clone 18",
  "line-based grep (misses multi-line headers): Debug 38 vs Iterator 25 - same winner")
q(5,"once_cell",".",
  "How many distinct traits does once_cell implement via explicit impl blocks (unsafe impls like Send/Sync included, derives not)? Count each trait once no matter how many types or generic arguments, and ignore example code inside doc comments.",
  "numeric",13,
  "count","crate",[],"distinct traits; unsafe impls count; no derives; no doc-comment code",
  "own impl scanner: Sync, Send, RefUnwindSafe, UnwindSafe, Drop, Default, Debug, Clone, PartialEq, Eq, From, Deref, DerefMut",
  "grep '^\\s*(unsafe )?impl.* for' | sed trait name | sort | uniq -c: same 13")
q(5,"lock_api",".",
  "What's the total number of `unsafe impl` blocks across lock_api's sources? Don't count the example in lib.rs's crate-level doc comment.",
  "numeric",30,
  "count","crate",["unsafe impl"],"exclude doc comments",
  "grep -n 'unsafe impl' *.rs minus the //! line: lib.rs 1, mutex.rs 9, remutex.rs 8, rwlock.rs 12",
  "own comment-stripping impl scanner: 30 unsafe impl headers")
q(5,"http",".",
  "Which file in the http crate contains the largest number of impl blocks (inherent and trait impls both count)?",
  "exact",["header/map.rs","src/header/map.rs"],
  "argmax","crate",[],"inherent + trait impls",
  "own impl scanner per file: header/map.rs 83, header/value.rs 38, header/name.rs 33",
  "grep -cE '^\\s*(unsafe )?impl\\b' per file: header/map.rs 83 at the top")
q(5,"memchr",".",
  "Which traits have at least one explicit impl anywhere in memchr's source? Leave out the src/tests/ directory and #[cfg(test)] code. Bare trait names.",
  "set",["Deref","Vector","Debug","Default","Iterator","DoubleEndedIterator"],
  "list","crate",[],"excluding tests; bare names",
  "own impl scanner over all non-test code: 6 distinct trait names",
  "grep -rnE '^\\s*(unsafe )?impl\\b.* for ' excluding tests/: cow.rs Deref, vector.rs Vector x3, prefilter Debug/Default, Iterator, DoubleEndedIterator")
q(5,"indexmap",".",
  "How many #[test] functions are there in indexmap's src tree (inline test modules included)?",
  "numeric",59,
  "count","crate",["#[test]"],"",
  "grep -rn '#\\[test\\]' src: map.rs 24, set.rs 23, rayon/map.rs 6, rayon/set.rs 5, map/core.rs 1",
  "python regex #[test] (attrs)* fn on comment-stripped code: 59")
q(5,"anyhow",".",
  "In anyhow, which source file has the most impl blocks? Count inherent impls as well as trait impls.",
  "exact",["error.rs","src/error.rs"],
  "argmax","crate",[],"inherent + trait impls",
  "own impl scanner per file: error.rs 18, ptr.rs 13, context.rs 12",
  "grep -cE '^\\s*(unsafe )?impl\\b' per file: error.rs 18, ptr.rs 13")

out = "/work/paraphrase/code/B/questions.jsonl"
with open(out, "w", encoding="utf-8") as f:
    for x in Q: f.write(json.dumps(x, ensure_ascii=False) + "\n")
files = {}
reg = "/usr/share/cargo/registry"
for c, v in VER.items():
    for p in sorted(glob.glob(f"{reg}/{c}-{v}/src/**/*.rs", recursive=True)):
        files[os.path.relpath(p, reg)] = hashlib.sha256(open(p, "rb").read()).hexdigest()
man = dict(writer="B", files=files, questions=hashlib.sha256(open(out, "rb").read()).hexdigest(), count=len(Q))
json.dump(man, open("/work/paraphrase/code/B/MANIFEST.json", "w"), indent=1)
import collections
print(len(Q), collections.Counter(x["level"] for x in Q), collections.Counter(x["kind"] for x in Q))
