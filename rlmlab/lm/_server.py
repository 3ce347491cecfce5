"""LiteLLM models on an OpenAI-compatible server: the key they are sent and how a step grammar reaches them.

A grammar (or JSON Schema) set by :func:`rlmlab.lm.constrained` travels in each request's body, in the field the
server reads (``constrain``):

- ``llamacpp``: llama.cpp's ``llama-server`` and llama-cpp-python's ``llama_cpp.server`` read ``grammar`` (GBNF) and
  ``response_format: {"type": "json_object", "schema": ...}``; ``repeat_penalty: 1.0`` is sent on every call so the
  server samples as the embedded model does (llama_cpp.server's default is 1.1, applied even at temperature 0);
- ``vllm``: ``structured_outputs: {"grammar" | "json": ...}`` (vLLM 0.10.2 and later; the ``guided_*`` fields it
  replaced were removed in 0.12); ``vllm-guided``: ``guided_grammar`` / ``guided_json`` for older vLLM;
- ``ollama``: ``format`` with the JSON Schema (``response_format`` on Ollama's ``/v1``); Ollama takes no grammar, so
  step grammars run free there;
- ``none``: nothing is sent; the executors run free and say so in the run's notes;
- ``auto`` (default): read from the server once per address: ``owned_by`` in ``/v1/models`` (``llamacpp``,
  ``vllm``, ``library``), else the title of its OpenAPI schema (llama_cpp.server's names llama.cpp), else one
  two-token request under a trivial ``grammar`` that only a llama.cpp server obeys.
  Without an ``api_base`` (a hosted API) nothing is probed: ``none``.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import threading
import urllib.request
from typing import Any
from urllib.parse import urlsplit

import dspy

from rlmlab.errors import ConfigError
from rlmlab.lm._constraints import DecodingConstraint, active_constraint

__all__ = ["SERVER_CONSTRAINTS", "PLACEHOLDER_KEY", "ServerLM", "server_lm", "detect_constraint", "request_extras",
           "is_loopback", "server_api_key"]

SERVER_CONSTRAINTS = ("auto", "llamacpp", "vllm", "vllm-guided", "ollama", "none")
# what each kind constrains: a GBNF grammar, a JSON Schema
_TAKES = {"llamacpp": ("grammar", "json_schema"), "vllm": ("grammar", "json_schema"),
          "vllm-guided": ("grammar", "json_schema"), "ollama": ("json_schema",), "none": ()}
# llama.cpp's own example key for a server started without --api-key; no secret, so safe to send anywhere
PLACEHOLDER_KEY = "sk-no-key-required"
_PROBE_GRAMMAR = 'root ::= "7q"'  # two characters no model writes by itself to "Reply."

_log = logging.getLogger("rlmlab.lm")
_DETECTED: dict[tuple[str, str], str] = {}
_DETECT_LOCK = threading.Lock()


def is_loopback(api_base: str | None) -> bool:
    """True when ``api_base`` names this machine (localhost, 127.0.0.0/8, ::1)."""
    host = urlsplit(api_base or "").hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _env(provider: str, *names: str) -> str | None:
    for name in names:
        value = os.environ.get(f"{provider.upper()}_{name}")
        if value:
            return value
    return None


def _same_base(a: str | None, b: str | None) -> bool:
    return bool(a and b) and a.rstrip("/") == b.rstrip("/")


def server_api_key(spec: str, api_base: str | None, api_key: str | None = None) -> str | None:
    """The key to send to ``api_base`` for ``spec``, or None to leave it to LiteLLM (the provider's own key).

    An ``api_key`` passed is used. With none, the provider's environment key (``OPENAI_API_KEY`` for ``openai/``)
    goes to a server on this machine only when the environment names that server too (``OPENAI_API_BASE``), so a
    real key never leaves for a local port it was not meant for; a local server otherwise gets
    :data:`PLACEHOLDER_KEY`, as does any server when no key is set at all (nothing secret is sent).
    """
    if api_key or not api_base:
        return api_key or None
    provider = spec.split("/", 1)[0]
    env_key = _env(provider, "API_KEY")
    if not env_key:
        return PLACEHOLDER_KEY
    if is_loopback(api_base) and not _same_base(api_base, _env(provider, "API_BASE", "BASE_URL")):
        return PLACEHOLDER_KEY
    return None


def _http_json(url: str, key: str | None, body: dict | None, timeout: float) -> Any:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers=headers, method="GET" if body is None else "POST")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8", "replace"))


def _vllm_kind(root: str, key: str | None) -> str:
    """``vllm`` (structured_outputs) unless the server reports a version before 0.10.2 (``vllm-guided``)."""
    try:
        version = str(_http_json(f"{root}/version", key, None, 5.0).get("version", ""))
        parts = tuple(int(p) for p in version.split(".")[:3] if p.isdigit())
    except (OSError, ValueError, AttributeError):
        return "vllm"
    return "vllm-guided" if parts and parts < (0, 10, 2) else "vllm"


def detect_constraint(api_base: str, model: str, key: str | None = None, timeout: float = 180.0) -> str:
    """What the server at ``api_base`` (an OpenAI-compatible ``.../v1``) constrains with: one of
    :data:`SERVER_CONSTRAINTS` but ``auto``. Read once per (address, model); a server that cannot be reached is
    ``none`` (said in the log). ``timeout``: seconds for the probe request (a loaded server is slow)."""
    base = api_base.rstrip("/")
    with _DETECT_LOCK:
        if (base, model) in _DETECTED:
            return _DETECTED[(base, model)]
    kind = _detect(base, model, key, timeout)
    with _DETECT_LOCK:
        _DETECTED[(base, model)] = kind
    _log.info("constrain: %s at %s", kind, base)
    return kind


def _detect(base: str, model: str, key: str | None, timeout: float) -> str:
    root = base[:-3] if base.endswith("/v1") else base
    try:
        listed = _http_json(f"{base}/models", key, None, min(timeout, 10.0))
    except (OSError, ValueError) as exc:
        _log.warning("constrain: %s/models did not answer (%s); steps run free", base, exc)
        return "none"
    owners = {str(m.get("owned_by", "")).lower() for m in (listed or {}).get("data", []) if isinstance(m, dict)}
    if owners & {"llamacpp", "llama-cpp", "llama.cpp"}:
        return "llamacpp"
    if "vllm" in owners:
        return _vllm_kind(root, key)
    if owners & {"library", "ollama"}:
        return "ollama"
    try:  # llama_cpp.server lists its models as owned by "me", but names itself in its OpenAPI schema
        title = str(_http_json(f"{root}/openapi.json", key, None, min(timeout, 10.0))["info"]["title"])
        if "llama.cpp" in title:
            return "llamacpp"
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:  # any other server: ask it to follow a grammar once (queued behind a busy server's work: a long timeout)
        out = _http_json(f"{base}/chat/completions", key, {
            "model": model, "messages": [{"role": "user", "content": "Reply."}], "max_tokens": 4,
            "temperature": 0, "grammar": _PROBE_GRAMMAR}, timeout)
        text = out["choices"][0]["message"]["content"]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        _log.warning("constrain: the grammar probe of %s failed (%s); steps run free", base, exc)
        return "none"
    return "llamacpp" if (text or "").strip() == "7q" else "none"


def request_extras(kind: str, constraint: DecodingConstraint | None, spec: str = "openai/") -> dict[str, Any]:
    """The LiteLLM keyword arguments that carry ``constraint`` to a ``kind`` server (``extra_body`` is merged into
    the request's JSON body); {} when there is nothing to send or the server cannot take it."""
    body: dict[str, Any] = {"repeat_penalty": 1.0} if kind == "llamacpp" else {}
    if constraint is None or ("grammar" if constraint.grammar is not None else "json_schema") not in _TAKES[kind]:
        return {"extra_body": body} if body else {}
    schema = json.loads(constraint.json_schema) if constraint.json_schema is not None else None
    if kind == "llamacpp":
        body.update({"grammar": constraint.grammar} if schema is None else
                    {"response_format": {"type": "json_object", "schema": schema}})
    elif kind == "vllm":
        body["structured_outputs"] = {"grammar": constraint.grammar} if schema is None else {"json": schema}
    elif kind == "vllm-guided":
        body.update({"guided_grammar": constraint.grammar} if schema is None else {"guided_json": schema})
    elif kind == "ollama":
        if spec.startswith("ollama"):  # LiteLLM's ollama providers pass ``format`` to /api/chat
            return {"format": schema}
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
    return {"extra_body": body}


class ServerLM(dspy.LM):
    """A LiteLLM model whose server constrains decoding: each call carries the active constraint (or the one
    bound with ``grammar=``/``json_schema=``) in the body fields of ``rlmlab_constrain``. Calls go through
    LiteLLM (DSPy's native engine cannot carry provider fields)."""

    rlmlab_constrain = "none"
    rlmlab_constraint: DecodingConstraint | None = None

    @property
    def constrains(self) -> tuple[str, ...]:
        """What this LM's server constrains: ("grammar", "json_schema"), ("json_schema",) or ()."""
        return _TAKES[self.rlmlab_constrain]

    def _with_extras(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        extras = request_extras(self.rlmlab_constrain, active_constraint(self.rlmlab_constraint), self.model)
        if "extra_body" in extras and kwargs.get("extra_body"):
            extras["extra_body"] = {**kwargs["extra_body"], **extras["extra_body"]}
        return {**kwargs, **extras}

    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        return super().__call__(prompt, messages=messages, **self._with_extras(kwargs))

    async def acall(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        return await super().acall(prompt, messages=messages, **self._with_extras(kwargs))


def server_lm(spec: str, *, constrain: str = "auto", grammar: str | None = None, json_schema: Any = None,
              **kwargs: Any) -> dspy.LM:
    """A DSPy LM for LiteLLM model ``spec`` (``kwargs`` go to ``dspy.LM``), with the key of
    :func:`server_api_key` and the constraint kind ``constrain`` (see the module's docstring); ConfigError for an
    unknown kind. A bound ``grammar``/``json_schema`` the server cannot take is dropped with a warning."""
    if constrain not in SERVER_CONSTRAINTS:
        raise ConfigError(f"constrain: {constrain!r}; use one of {', '.join(SERVER_CONSTRAINTS)}")
    # DSPy caches replies on disk by default, and a cached reply carries no usage: a rerun would report 0 tokens in
    # 0.1 s as if the model had answered. Every call reaches the server unless the caller opts in (cache=True);
    # the recorder then marks the calls the cache answered.
    kwargs.setdefault("cache", False)
    provider = spec.split("/", 1)[0]
    api_base = kwargs.get("api_base") or kwargs.get("base_url") or _env(provider, "API_BASE", "BASE_URL")
    if not provider.startswith("ollama"):  # LiteLLM's ollama providers send no key
        key = server_api_key(spec, api_base, kwargs.get("api_key"))
        if key is not None:
            kwargs["api_key"] = key
    if constrain == "auto":
        if provider.startswith("ollama"):
            constrain = "ollama"
        elif api_base:
            constrain = detect_constraint(api_base, spec.split("/", 1)[1], kwargs.get("api_key") or
                                          _env(provider, "API_KEY"))
        else:
            constrain = "none"
    bound = DecodingConstraint.of(grammar, json_schema)
    if bound is not None and ("grammar" if bound.grammar is not None else "json_schema") not in _TAKES[constrain]:
        _log.warning("%s: the %s is ignored; its server (constrain: %s) cannot follow one", spec,
                     "grammar" if bound.grammar is not None else "json_schema", constrain)
        bound = None
    if constrain == "none":
        return dspy.LM(spec, **kwargs)
    lm = ServerLM(spec, engine="litellm", **kwargs)
    lm.rlmlab_constrain, lm.rlmlab_constraint = constrain, bound
    return lm

