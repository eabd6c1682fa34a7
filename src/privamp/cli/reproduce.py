"""``privamp reproduce``: regenerate the tables and figures of the papers.

Thin, like the rest of the command line: parse, call :func:`privamp.reproduce.run`, format. ::

    privamp reproduce list
    privamp reproduce must-table3 --out reproduction
    privamp reproduce must2023 --out reproduction           # every artifact of one paper
    privamp reproduce all --out reproduction [--quick]
    privamp reproduce all --data ../shared/data/adult_processed.csv   # another Adult copy

Each artifact writes ``<id>.png``, ``<id>.csv`` (and ``<id>-comparison.csv`` for tables) into
``--out``; ``REPRODUCTION.md`` there summarises every artifact present. The artifacts on the
Adult data (MUST Table 8, Figure S4) read the copy shipped with privamp (sha256-checked;
:mod:`privamp.data`), or the file given by ``--data``; nothing is downloaded. ``--json`` prints one
object: ``{"out", "report", "quick", "seconds", "artifacts": [...]}`` (``list``:
``{"artifacts": [...], "pending": [...]}``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import SUMMARIES
from ._common import add_json, can_create_in, emit_json, table

__all__ = ["add_reproduce"]


#: Parameter names of this command -> options, for error messages.
OPTION_NAMES = {"artifact": "ARTIFACT", "seed": "--seed", "data": "--data"}


def add_reproduce(sub) -> None:
    """Add ``privamp reproduce``."""
    p = sub.add_parser("reproduce", help=SUMMARIES["reproduce"])
    p.add_argument("artifact", metavar="ARTIFACT",
                   help="an artifact id (see 'privamp reproduce list'), a paper (bbg2018, "
                        "wang2019, bbgg2019, must2023), 'all', or 'list'")
    p.add_argument("--out", default="reproduction", type=_folder,
                   help="output folder, created if needed (default ./reproduction)")
    p.add_argument("--quick", action="store_true",
                   help="the CI version: fewer Monte-Carlo draws, coarser grids, smaller FFTs")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the Monte-Carlo parts (default 0)")
    p.add_argument("--data", metavar="PATH", default=None,
                   help="data file of the artifacts that read one (must-table8-metrics, "
                        "must-figS4): the MUST authors' preprocessed Adult CSV, plain or .gz "
                        "(default: the copy shipped with privamp)")
    add_json(p)
    p.set_defaults(func=_cmd_reproduce)


def _folder(text: str) -> str:
    """``--out``: a folder to write into (new or existing), not a file and not ``""``."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a folder name; got ''")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"must be a folder, not a file; got {text!r}")
    existing = next(p for p in (path.absolute(), *path.absolute().parents) if p.exists())
    if not existing.is_dir() or not can_create_in(existing):
        raise argparse.ArgumentTypeError(f"must be a folder we can write into; got {text!r}")
    return text


def _cmd_list(args: argparse.Namespace) -> int:
    from ..reproduce import ARTIFACTS
    from ..reproduce.report import PENDING

    arts = [{"id": a.id, "paper": a.paper, "kind": a.kind, "label": a.label, "title": a.title,
             "needs": a.needs} for a in (ARTIFACTS[k] for k in ARTIFACTS)]
    pending = [{"id": aid, "paper": paper, "label": label, "what": what}
               for aid, paper, label, what in PENDING if aid not in ARTIFACTS]
    if args.json:
        emit_json({"artifacts": arts, "pending": pending})
        return 0
    print(table(["artifact", "paper", "kind", "table/figure"],
                [[a["id"] + (" (reads Adult)" if a["needs"] else ""), a["paper"], a["kind"],
                  a["label"]] for a in arts]))
    if pending:
        print()
        print("Not yet regenerated: "
              + ", ".join(f"{p['label']} ({p['id']})" for p in pending))
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from ..reproduce import resolve, run
    from ..reproduce.report import agreement_summary

    if args.artifact == "list":
        return _cmd_list(args)
    resolve(args.artifact)  # InvalidParameterError (exit 2) for an unknown name, up front
    tty = sys.stderr.isatty() and not args.json
    start = time.perf_counter()

    def progress(artifact_id: str, record: dict | None) -> None:
        if record is None:
            if tty:
                sys.stderr.write(f"\r  building {artifact_id:<28.28}")
                sys.stderr.flush()
            return
        if tty:
            sys.stderr.write("\r" + " " * 40 + "\r")
        if not args.json:
            print(f"{artifact_id:<22} {record['seconds']:7.1f} s  {agreement_summary(record)}")

    records = run([args.artifact], args.out, quick=args.quick, seed=args.seed, data=args.data,
                  progress=progress)
    seconds = time.perf_counter() - start
    report = f"{args.out.rstrip('/')}/REPRODUCTION.md"
    if args.json:
        emit_json({
            "out": args.out, "report": report, "quick": args.quick, "seed": args.seed,
            "seconds": round(seconds, 3),
            "artifacts": [{
                "id": r["id"], "paper": r["paper"], "kind": r["kind"], "label": r["label"],
                "seconds": r["seconds"], "files": r["files"], "comparison": r["comparison"],
                "checks_held": sum(1 for c in r["checks"] if c["holds"]),
                "checks": len(r["checks"]), "errata": r["errata"]} for r in records],
        })
        return 0
    print(f"wrote {len(records)} artifact(s) to {args.out} in {seconds:.1f} s; "
          f"summary: {report}")
    return 0
