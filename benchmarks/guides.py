"""Run All time of each guide notebook as shipped (the embedded model, grammar decoding): issue 28's <= 2 minutes.

Each guide (notebooks/00_tour, 01_explore_traces, 02_teacher_learner) is executed by papermill on the rlmlab
kernel with its shipped parameters (only the output folders point into a temporary directory), one after the
other; the script prints each one's wall time, the load average before it, and whether it printed a progress
line per task or item. Run on an idle machine:  .venv/bin/python benchmarks/guides.py
``--smoke`` runs 02 with a scripted learner and one item (seconds, no model) and writes its JSON, so the script
cannot rot (tests/test_guide_notebooks.py runs every guide). Numbers go to ``--json`` (default runs/bench/guides.json).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GUIDES = ("00_tour", "01_explore_traces", "02_teacher_learner")
SMOKE = {"02_teacher_learner": {"learner_lm": "scripted:arith", "items": 1}}  # the guides' own tests run each one


def run_guide(name: str, where: Path, parameters: dict) -> dict:
    import papermill

    out = where / f"{name}.out.ipynb"
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    papermill.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(out), parameters=parameters,
                               kernel_name="rlmlab", cwd=str(where), progress_bar=False)
    seconds = time.perf_counter() - t0
    cells = [c for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"]
    streams = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "stream"]
    return {"notebook": name, "seconds": round(seconds, 1), "load_before": round(load, 2),
            "stream_messages": len(streams), "parameters": parameters}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--guides", default=",".join(GUIDES))
    ap.add_argument("--json", help="default runs/bench/guides.json in the checkout; --smoke: runs/bench_smoke/")
    ap.add_argument("--smoke", action="store_true", help="02 on a scripted learner, one item: seconds")
    args = ap.parse_args()
    # a smoke run (make check) never overwrites a full run's figures
    args.json = args.json or str(Path("runs/bench_smoke") if args.smoke else ROOT / "runs" / "bench") + "/guides.json"
    from rlmlab.jupyter import install_kernel

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        install_kernel(prefix=str(where / "jupyter"))
        os.environ["JUPYTER_PATH"] = str(where / "jupyter" / "share" / "jupyter")
        names = list(SMOKE) if args.smoke else [g.strip() for g in args.guides.split(",") if g.strip()]
        for name in names:
            params = dict(SMOKE[name]) if args.smoke else {}
            out_dir = {"02_teacher_learner": "run_dir"}.get(name, "runs_dir")
            params[out_dir] = str(where / name)
            row = run_guide(name, where, params)
            rows.append(row)
            print(f"{name:<22} {row['seconds']:>7.1f} s  (load {row['load_before']}, "
                  f"{row['stream_messages']} printed messages)", flush=True)
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"smoke": args.smoke, "rows": rows}, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
