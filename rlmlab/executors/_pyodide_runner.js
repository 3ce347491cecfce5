// PyodideInterpreter's REPL: CPython compiled to WebAssembly (Pyodide, from npm) inside Deno.
//
// Usage: deno run --cached-only --no-prompt --allow-read=PYODIDE_DIR,SESSION_PY,BLOBREF_PY[,SNAPSHOT]
//            _pyodide_runner.js run SESSION_PY BLOBREF_PY [SNAPSHOT]
// Read access is needed only to load Pyodide and the files named; it is revoked before any model code runs,
// so the code has no file, network, environment or subprocess permission at all (Deno denies without prompting).
// Pyodide's own file system is in memory: what the code writes there never reaches the host.
// Unlike dspy's runner.js this imports nothing from deno.land (only npm is reachable here) and reads stdin
// synchronously, so a tool call blocks the Python code without WebAssembly stack switching.

import pyodideModule from "npm:pyodide@0.29.4/pyodide.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function writeLine(line) {
  const bytes = encoder.encode(line + "\n");
  for (let done = 0; done < bytes.length;) done += Deno.stdout.writeSync(bytes.subarray(done));
}

// Whole lines read but not yet served, and the bytes of the line still arriving.
const lines = [];
let partial = [];
function nextLine() {
  while (!lines.length) {
    const buffer = new Uint8Array(1 << 16);
    const n = Deno.stdin.readSync(buffer);
    if (n === null) return null;
    let start = 0;
    for (let end = buffer.indexOf(10); end >= 0 && end < n; end = buffer.indexOf(10, start)) {
      partial.push(buffer.subarray(start, end));
      lines.push(decoder.decode(concat(partial)));
      partial = [];
      start = end + 1;
    }
    if (start < n) partial.push(buffer.subarray(start, n));
  }
  return lines.shift();
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const quiet = { stdout: () => {}, stderr: () => {} };

// `snapshot OUT`: write a memory snapshot of a freshly started Pyodide with the REPL's imports done, then exit.
// Starting from it skips CPython's initialisation (about 10x faster); it runs no model code.
if (Deno.args[0] === "snapshot") {
  const pyodide = await pyodideModule.loadPyodide({ ...quiet, _makeSnapshot: true });
  pyodide.runPython("import ast, builtins, io, json, keyword, sys");
  Deno.writeFileSync(Deno.args[1], pyodide.makeMemorySnapshot());
  Deno.exit(0);
}

// `run SESSION_PY BLOBREF_PY [SNAPSHOT]`: serve the REPL on stdin/stdout.
const [, sessionPath, blobrefPath, snapshotPath] = Deno.args;
const sources = { "_rlmlab_session.py": Deno.readTextFileSync(sessionPath), "_blobref.py": Deno.readTextFileSync(blobrefPath) };
const snapshot = snapshotPath ? { _loadSnapshot: Deno.readFileSync(snapshotPath) } : {};
// Output the code writes below Python's sys.stdout (os.write(1, ...), C extensions) is dropped: stdout is the protocol.
const pyodide = await pyodideModule.loadPyodide({ ...quiet, ...snapshot });
await Deno.permissions.revoke({ name: "read" });

pyodide.FS.mkdirTree("/rlmlab");
for (const [name, text] of Object.entries(sources)) pyodide.FS.writeFile(`/rlmlab/${name}`, text);
pyodide.globals.set("_rlmlab_read", nextLine);
pyodide.globals.set("_rlmlab_write", writeLine);
pyodide.runPython(`
import sys
sys.path.insert(0, "/rlmlab")
import _rlmlab_session
_read, _write = _rlmlab_read, _rlmlab_write
del _rlmlab_read, _rlmlab_write
_rlmlab_session.main(_read, _write)
`);
