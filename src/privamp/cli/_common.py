"""Shared machinery of the command line: one-line errors, JSON/table output, common options.

Every command module (``privamp.cli`` and its modules, one per feature area) builds on
these, so the contract — exactly one JSON object with ``--json``, exit status 2 and a one-line
message naming the option for bad input — is implemented once.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import Interval, check_int, check_real

# numbers in text output: the directed rounding of privamp.display (re-exported here)
from ..display import num, num_down, num_up  # noqa: F401
from ..errors import InvalidParameterError, MissingDependencyError, format_value
from ..mechanisms import REGISTRY, Mechanism
from ..profiles import GroupPrivacy, PrivacyProfile
from ..relations import NeighbouringRelation
from ..sampling.schemes import SCHEMES, flat_schemes
from ._parser import CliError, Parser  # noqa: F401  (the command modules import them here)

#: Python parameter names -> command-line options, for error messages.
OPTION_NAMES = {
    "sigma": "--sigma",
    "scale": "--scale",
    "sensitivity": "--sensitivity",
    "epsilon": "--rr-epsilon",
    "p": "--rr-p",
    "eps": "--eps",
    "relation": "--relation",
    "k": "--k",
    "t": "--t",
    "max_batch": "--max-batch",
    "order": "--order",
    "group_privacy": "--group-privacy",
    "group_size": "--group-size",
    "eps_min": "--eps-min",
    "eps_max": "--eps-max",
    "points": "--points",
    "rate": "--rate",
    "n": "--n",
    "m": "--m",
    "b": "--b",
}

#: the mechanisms and schemes the command line builds: those declaring flat parameters in the
#: mechanism and scheme registries
MECHANISMS = REGISTRY.parametrised()
SAMPLINGS = ("none", *flat_schemes())
#: the subsampling schemes of the seeds (a batch drawn independently per step), without the
#: batch samplers of :mod:`privamp.sampling.rounds`: the MUST paper's experiments' choices
SUBSAMPLINGS = tuple(k for k in SAMPLINGS[1:] if not getattr(SCHEMES[k], "pld_only", False))


def _unique(params, order=None):
    """The distinct parameters (by name), in the order ``order`` gives (default: as met)."""
    out = {}
    for p in params:
        out.setdefault(p.name, p)
    return sorted(out.values(), key=order) if order else list(out.values())


#: the mechanism options: each mechanism's own parameters, then the shared ones (sensitivity)
MECHANISM_PARAMS = _unique(
    (p for name in MECHANISMS for p in REGISTRY[name].params),
    order=lambda p: sum(p in REGISTRY[name].params for name in MECHANISMS) > 1)
#: the size options: the sampling rate, then the sizes in the order the MUST schemes take them
SCHEME_PARAMS = _unique(
    (p for kind in SAMPLINGS[1:] for p in SCHEMES[kind].params),
    order=lambda p: max(SCHEMES[k].params.index(p) + 1 if p in SCHEMES[k].params else 0
                        for k in SAMPLINGS[1:]))


def register_option_names(names: dict[str, str]) -> None:
    """Let a command module map its parameter names to option names for error messages."""
    OPTION_NAMES.update(names)


# ---------------------------------------------------------------------------------------------
# option types: values refused while parsing, before anything is computed
# ---------------------------------------------------------------------------------------------


def int_in(interval: str):
    """An argparse ``type``: an integer in ``interval`` (``"[1, inf)"``); anything else is refused
    as ``--option must be an integer in [1, inf); got 0``.

    >>> int_in("[1, inf)")("12")
    12
    """
    iv = Interval.parse(interval)

    def integer(text: str) -> int:
        try:
            value = int(text)
        except ValueError:  # not an integer literal (also: more than 4300 digits)
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise argparse.ArgumentTypeError(f"must be an integer in {iv}; got {shown!r}") \
                from None
        try:
            return check_int("value", value, iv)
        except InvalidParameterError as exc:
            shown = format_value(value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise argparse.ArgumentTypeError(f"must be {exc.rule}; got {shown}") from None

    return integer


#: What ``--out`` of the plot commands may end in. matplotlib writes all of these; ``pgf`` (needs
#: LaTeX) and the raw pixel buffers (``raw``, ``rgba``) are left out.
IMAGE_FORMATS = ("png", "pdf", "svg", "svgz", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")


def writable_file(text: str, what: str = "a file") -> Path:
    """A path a command may write: not a folder, in an existing folder we can write to."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"must be {what}, not a folder; got {text!r}")
    folder = path.parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"must be {what} in an existing folder; got {text!r} "
                                         f"({str(folder)!r} does not exist)")
    if not can_create_in(folder) or (path.exists() and not os.access(path, os.W_OK)):
        raise argparse.ArgumentTypeError(f"must be {what} in a folder we can write to; got "
                                         f"{text!r}")
    return path


def can_create_in(folder: Path) -> bool:
    """Whether a file can be created in ``folder``, tried (and removed at once): permissions
    say yes to root for /proc, /sys and read-only mounts, where writing fails after the work."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    import tempfile

    try:
        fd, name = tempfile.mkstemp(prefix=".privamp-probe-", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(name)
    return True


def image_path(text: str) -> str:
    """An argparse ``type`` for ``--out`` of the plot commands: a writable file whose extension
    is one of :data:`IMAGE_FORMATS` (the format comes from it), with matplotlib installed —
    all checked before anything is computed."""
    ext = Path(text).suffix.lower().lstrip(".")
    if ext not in IMAGE_FORMATS:
        raise argparse.ArgumentTypeError(
            "must be an image file name ending in " + ", ".join(f".{e}" for e in IMAGE_FORMATS)
            + f"; got {text!r}")
    writable_file(text, "an image file")
    if importlib.util.find_spec("matplotlib") is None:
        raise MissingDependencyError("matplotlib", "plots")
    return text


def add_image_out(p: argparse.ArgumentParser) -> None:
    """``--out FILE`` of a plot command (see :func:`image_path`)."""
    p.add_argument("--out", required=True, type=image_path, metavar="FILE",
                   help="output image; the format comes from the extension: "
                        + ", ".join(IMAGE_FORMATS))


def add_json(p: argparse.ArgumentParser) -> None:
    """``--json``, which every command has."""
    p.add_argument("--json", action="store_true", help="print one JSON object")


def add_plot_outputs(p: argparse.ArgumentParser) -> None:
    """``--out FILE`` and ``--json`` of a plot command."""
    add_image_out(p)
    add_json(p)



# ---------------------------------------------------------------------------------------------
# option groups shared by commands
# ---------------------------------------------------------------------------------------------


def add_mechanism_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("mechanism")
    g.add_argument("--mechanism", required=True, choices=MECHANISMS,
                   help="the base mechanism")
    for param in MECHANISM_PARAMS:  # checked by the constructors (and check_applicable)
        g.add_argument(param.flag, type=float, dest=param.name, default=None,
                       help=param.help)
    g.add_argument("--relation", choices=("add-remove", "substitute"), default=None,
                   help="neighbouring relation on the full dataset (default: the sampling "
                        "scheme's natural one; add-remove without sampling). --sensitivity is "
                        "read under the relation the amplification theorem needs for the base "
                        "mechanism: substitute, except Poisson under add-remove")


def add_sampling_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sampling")
    g.add_argument("--sampling", choices=SAMPLINGS, default="none",
                   help="subsampling scheme applied before the mechanism (default none)")
    for param in SCHEME_PARAMS:
        g.add_argument(param.flag, type=int_in(param.interval) if param.integer else float,
                       help=param.help)
    g.add_argument("--order", choices=("reshuffle", "persistent"), default=None,
                   help="shuffle: a fresh permutation every epoch (reshuffle, default) or one "
                        "permutation reused (persistent)")
    g.add_argument("--group-privacy", choices=("white-box", "black-box"), default=None,
                   dest="group_privacy",
                   help="how group profiles are obtained (default: white-box where available); "
                        "for wr and must-*, where the differing record can be drawn several "
                        "times, and for --group-size without sampling")
    g.add_argument("--group-size", type=int_in("[1, inf)"), default=1, dest="group_size",
                   help="the guarantee (profile, epsilon, delta) for groups of this many "
                        "records (default 1)")


def add_size_options(p: argparse.ArgumentParser) -> None:
    """``--n``, ``--m`` and ``--b`` of a plot comparing several schemes (``--schemes``) on one
    dataset; Poisson runs at rate m/n (see :func:`stage_one_size`)."""
    p.add_argument("--n", type=int_in("[1, inf)"), required=True, help="dataset size")
    p.add_argument("--m", type=int_in("[1, inf)"), required=True,
                   help="subsample size (Poisson rate m/n)")
    p.add_argument("--b", type=int_in("[1, inf)"), default=None,
                   help="MUST stage-I size (must-* schemes; default n/2)")


def stage_one_size(args: argparse.Namespace) -> int:
    """``--b`` of :func:`add_size_options` (default n/2), once Poisson's rate m/n is checked."""
    if "poisson" in args.schemes and args.m > args.n:
        raise CliError(f"--m must be at most --n = {args.n} for --schemes poisson (its rate is "
                       f"m/n); got {args.m}")
    return args.b if args.b is not None else max(1, args.n // 2)


def add_eps_grid_options(p: argparse.ArgumentParser, low: float, high: float, points: int, *,
                         what: str, points_help: str) -> None:
    """``--eps-min``, ``--eps-max`` and ``--points`` of a plot over a grid of ε (defaults
    ``low``, ``high``, ``points``; see :func:`eps_grid`)."""
    p.add_argument("--eps-min", type=float, default=low, dest="eps_min",
                   help=f"smallest {what} (default {low:g})")
    p.add_argument("--eps-max", type=float, default=high, dest="eps_max",
                   help=f"largest {what} (default {high:g})")
    p.add_argument("--points", type=int_in("[2, 100000]"), default=points,
                   help=f"{points_help}, 2 to 100000 (default {points})")


def eps_grid(args: argparse.Namespace, low: str) -> np.ndarray:
    """The ε grid of :func:`add_eps_grid_options`; ``--eps-min`` in the interval ``low``."""
    lo = check_real("eps_min", args.eps_min, low)
    hi = check_real("eps_max", args.eps_max, "(0, inf)")
    if hi <= lo:
        raise CliError(f"--eps-max ({num(hi)}) must be larger than --eps-min ({num(lo)})")
    return np.linspace(lo, hi, args.points)  # --points: 2 to 100000 (checked while parsing)


def build_scheme(args: argparse.Namespace):
    """The sampling scheme named by ``--sampling`` (``None`` for ``none``), from the scheme
    registry and its declared parameters."""
    kind = getattr(args, "sampling", "none")
    if kind == "none":
        return None
    cls = SCHEMES[kind]
    defaults = {p.name for p in cls.params if p.default is not None}
    for name in cls.reads():
        if getattr(args, name) is None and name not in defaults:
            raise CliError(f"{_flag(name)} is required with --sampling {kind}")
    extra = {"order": args.order} if getattr(args, "order", None) is not None else {}
    return cls.from_params(**{p.name: getattr(args, p.name, None) for p in cls.params}, **extra)


# ---------------------------------------------------------------------------------------------
# options that do not apply are refused, never ignored
# ---------------------------------------------------------------------------------------------

#: The options each mechanism reads (its declared parameters).
MECHANISM_READS = {name: tuple(p.name for p in REGISTRY[name].params) for name in MECHANISMS}

#: The size options each sampling scheme reads (commands with ``--rate``; the commands that take
#: sizes only run Poisson at rate m/n). Poisson also reads ``--n`` under substitution.
SCHEME_READS = {"none": (), **{kind: SCHEMES[kind].reads() for kind in SAMPLINGS[1:]}}

_MECHANISM_OPTIONS = tuple(p.name for p in MECHANISM_PARAMS)
_SIZE_OPTIONS = tuple(p.name for p in SCHEME_PARAMS)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _flags(names) -> str:
    return ", ".join(_flag(n) for n in names) if names else "no sampling option"


def _scheme_reads(kind: str, args: argparse.Namespace) -> tuple[str, ...]:
    if not hasattr(args, "rate"):  # a command taking sizes only: Poisson at rate m/n
        return ("n", "b", "m") if "b" in SCHEME_READS[kind] else ("n", "m")
    if kind == "none":
        return ()
    # Poisson also reads --n under substitution (Balle et al. 2018, Theorem 14)
    return SCHEMES[kind].reads(getattr(args, "relation", None))


def check_applicable(args: argparse.Namespace) -> None:
    """Refuse every option the chosen mechanism, sampling scheme or calibrated parameter would
    not read (an ignored option is a silent misunderstanding: ``--rate`` without ``--sampling
    poisson`` used to answer for unsampled data).

    The one check of every command, called by :func:`privamp.cli.main` after parsing. It reads
    the namespace: ``mechanism`` and its options (``sigma``, ``scale``, ``rr_epsilon``,
    ``rr_p``, ``sensitivity``); the scheme(s) in ``sampling``, ``scheme`` or ``schemes`` and
    the sizes (``rate``, ``n``, ``b``, ``m``); ``group_privacy``; and ``calibrate``. Also fills
    in ``sensitivity`` (default 1), which is ``None`` while parsing so that it can be checked.
    """
    mech = getattr(args, "mechanism", None)
    if mech in MECHANISM_READS:
        reads = MECHANISM_READS[mech]
        for name in _MECHANISM_OPTIONS:
            if getattr(args, name, None) is not None and name not in reads:
                raise CliError(f"{_flag(name)} does not apply to --mechanism {mech} (it reads "
                               f"{_flags(reads)})")
        if hasattr(args, "sensitivity") and "sensitivity" in reads:
            if args.sensitivity is None:
                args.sensitivity = 1.0
            # as in sweep grids: a query of sensitivity 0 needs no noise and no accounting
            check_real("sensitivity", args.sensitivity, "(0, inf)")
    for option in ("sampling", "scheme", "schemes"):
        if hasattr(args, option):
            kinds = getattr(args, option)
            kinds = [kinds] if isinstance(kinds, str) else list(kinds)
            break
    else:
        return
    reads = sorted({name for kind in kinds for name in _scheme_reads(kind, args)},
                   key=_SIZE_OPTIONS.index)
    for name in _SIZE_OPTIONS:
        if getattr(args, name, None) is not None and name not in reads:
            raise CliError(f"{_flag(name)} does not apply to --{option} {' '.join(kinds)} "
                           f"({'it reads' if len(kinds) == 1 else 'they read'} "
                           f"{_flags(reads)}"
                           + ("; --n only under --relation substitute" if name == "n"
                              and "poisson" in kinds and "rate" in reads else "") + ")")
    if getattr(args, "order", None) is not None and "shuffle" not in kinds:
        raise CliError(f"--order does not apply to --{option} {' '.join(kinds)} (it is the "
                       "epoch order of --sampling shuffle)")
    if getattr(args, "group_privacy", None) is not None:
        several = any(k == "wr" or k.startswith("must") for k in kinds)
        groups = kinds == ["none"] and getattr(args, "group_size", 1) != 1
        if not (several or groups):
            raise CliError(f"--group-privacy does not apply to --{option} {' '.join(kinds)} "
                           "(it chooses the group profiles of wr and must-*, where the "
                           "differing record can be drawn several times, or of --group-size "
                           "without sampling)")
    if hasattr(args, "calibrate"):
        target = args.calibrate or (REGISTRY[mech].noise if mech in MECHANISMS else None)
        if target is not None and getattr(args, target, None) is not None:
            raise CliError(f"{_flag(target)} is what --calibrate {target} computes; leave it "
                           "out")
        if getattr(args, "max_steps", None) is not None and target != "steps":
            raise CliError("--max-steps applies to --calibrate steps only")


def describe_scheme(scheme) -> dict[str, Any]:
    return {"scheme": "none"} if scheme is None else scheme.describe()


#: Readable names of the sampling schemes and symbols of their parameters (plot texts).
_SCHEME_NAMES = {"poisson": "Poisson", "wor": "WOR", "wr": "WR", "must-ow": "MUST.OW",
                 "must-wo": "MUST.WO", "must-ww": "MUST.WW",
                 "random-allocation": "random allocation", "shuffle": "shuffling",
                 "truncated-poisson": "truncated Poisson", "none": "no sampling"}
_SCHEME_SYMBOLS = {"rate": "q", "max_batch": "max batch"}


def scheme_text(scheme) -> str:
    """A sampling scheme for a plot's text: ``"Poisson, q = 0.01"``, ``"WOR, n = 100,
    m = 10"``, ``"no sampling"`` (not a parameter dump)."""
    d = describe_scheme(scheme)
    name = d.pop("scheme")
    terms = [f"{_SCHEME_SYMBOLS.get(k, k)} = {num(v) if isinstance(v, float) else f'{v:,}'}"
             for k, v in d.items() if not (name == "poisson" and k == "n")]
    return ", ".join([_SCHEME_NAMES.get(name, name), *terms])


def relation_text(relation) -> str:
    """``"add/remove"`` or ``"substitution"`` (a plot's wording of a neighbouring relation)."""
    value = getattr(relation, "value", relation)
    return {"add-remove": "add/remove", "substitute": "substitution"}.get(value, str(value))


def build_mechanism(args: argparse.Namespace,
                    relation: NeighbouringRelation | None = None) -> Mechanism:
    if relation is None:
        relation = NeighbouringRelation.parse(args.relation or "add-remove")
    name = args.mechanism
    cls = REGISTRY[name]
    for param in cls.required():
        require(args, param.name, param.flag, name)
    if cls.one_of and sum(getattr(args, n) is not None for n in cls.one_of) != 1:
        flags = ", ".join(p.flag for p in cls.params if p.name in cls.one_of)
        raise CliError(f"--mechanism {name} needs exactly one of {flags}")
    return cls.from_params(relation, **{p.name: getattr(args, p.name, None)
                                        for p in cls.params})


def require(args, attr: str, option: str, mechanism: str) -> None:
    if getattr(args, attr) is None:
        raise CliError(f"{option} is required with --mechanism {mechanism}")


def describe_mechanism(mech: Mechanism) -> dict[str, Any]:
    return mech.describe()


def short_description(mech: Mechanism) -> str:
    """A short description of a mechanism for a plot title."""
    d = describe_mechanism(mech)
    if d["name"] == "gaussian":
        return f"Gaussian mechanism σ = {num(d['sigma'])}, Δ = {num(d['sensitivity'])}"
    if d["name"] == "laplace":
        return f"Laplace mechanism b = {num(d['scale'])}, Δ = {num(d['sensitivity'])}"
    return f"randomized response p = {num(d['p'])}"


def profile_for(args: argparse.Namespace) -> tuple[Mechanism, PrivacyProfile]:
    """The (possibly subsampled) profile described by the mechanism and sampling options.

    Without sampling: the mechanism's profile (group profile with ``--group-size``). With
    sampling: the amplified profile of :func:`privamp.amplification.subsampling.amplify`, the
    mechanism being built under the relation the theorem needs for it.
    """
    from ..amplification.subsampling import amplify

    method = None if args.group_privacy is None else GroupPrivacy.parse(args.group_privacy)
    mech, scheme, outer = build_event(args)
    if scheme is None:
        profile = mech.profile()
        if args.group_size != 1 or args.group_privacy is not None:
            profile = profile.group(args.group_size, method)
        return mech, profile
    return mech, amplify(mech, scheme, outer, method)


def build_event(args: argparse.Namespace, scheme=None):
    """The mechanism (under the relation the scheme needs), the scheme and the outer relation
    described by the options (``scheme``, when given, instead of ``--sampling``)."""
    scheme = build_scheme(args) if scheme is None else scheme
    if scheme is None:
        outer = NeighbouringRelation.parse(args.relation or "add-remove")
        return build_mechanism(args, outer), None, outer
    outer = (scheme.natural_relation if args.relation is None
             else NeighbouringRelation.parse(args.relation))
    return build_mechanism(args, scheme.base_relation(outer)), scheme, outer


def composition_group_privacy(args: argparse.Namespace, groups: bool = False):
    """``--group-privacy`` of a composition command; ``--group-size`` is refused unless the
    command accounts groups of records (``groups``: ``epsilon`` and ``delta``, through
    :mod:`privamp.pld.group`)."""
    if args.group_size != 1 and not groups:
        raise CliError("--group-size is not used by this command (composition is per record; "
                       "use --group-privacy to choose how group profiles enter WR/MUST)")
    return args.group_privacy


def group_of(profile: PrivacyProfile, args: argparse.Namespace) -> PrivacyProfile:
    """``--group-size K`` applied to a (possibly amplified) profile: black-box after sampling,
    the mechanism's own group profile otherwise (already applied by :func:`profile_for`)."""
    if args.group_size == 1 or not hasattr(profile, "points"):
        return profile
    return profile.group(args.group_size, "black-box")


# ---------------------------------------------------------------------------------------------
# formatting
# ---------------------------------------------------------------------------------------------


def jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


#: The warnings a command raises, recorded by :func:`privamp.cli.main` (a list of
#: ``warnings.WarningMessage``): in the JSON object as ``"warnings"``, or on stderr as
#: ``privamp: warning: ...`` lines after a text answer; never a multi-line Python warning.
WARNINGS: list = []


def warning_lines() -> list[str]:
    """The recorded warnings, one line each, without repeats."""
    lines = (f"{w.category.__name__}: {' '.join(str(w.message).split())}" for w in WARNINGS)
    return list(dict.fromkeys(lines))


def emit_json(obj: dict[str, Any]) -> None:
    if WARNINGS:
        obj = {**obj, "warnings": warning_lines()}
    import json  # here: a command's --help never needs it (start-up time)

    sys.stdout.write(json.dumps(jsonable(obj), allow_nan=False) + "\n")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


class Progress:
    """One line of progress on stderr, redrawn in place; shown only on a terminal and never
    with ``--json`` (``enabled=False``), where stdout holds one JSON object and stderr nothing.

    Three forms, one per kind of work:

    * ``progress.stage(text)``: a named stage, the number of stages so far and the time
      (accounting queries and calibrations);
    * ``progress(done, total, label)``: a bar with a label and the time (the experiments);
    * ``progress(done, total)``: a bar with the rate and the time left, counted from the first
      report (sweeps, which may resume half done).

    ``done()`` blanks the line if anything was drawn.

    While a stage runs, the line is redrawn twice a second with the elapsed time and the last
    report of the library on the ``privamp.progress`` logger (:mod:`privamp._progress`: each
    composition, each calibration evaluation), so a long wait is never a frozen line.
    """

    #: Characters blanked by :meth:`done`: enough for the longest line of each form.
    BLANK = {"stage": 92, "label": 80, "rate": 78}
    WIDTH = 30  # of the bar
    TICK = 0.5  # seconds between redraws of a running stage

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.start = time.perf_counter()
        self.count = 0  # stages drawn
        self.first: int | None = None  # the first ``done`` of a rate bar
        self.drawn: str | None = None  # the form last drawn
        self.text = ""  # the running stage
        self.detail = ""  # the library's last report
        # created with the first stage (threading and logging stay unimported otherwise)
        self._lock: Any = None
        self._stop: Any = None
        self._handler: Any = None

    def _write(self, form: str, line: str) -> None:
        if self._lock is not None:
            with self._lock:
                self._put(form, line)
        else:
            self._put(form, line)

    def _put(self, form: str, line: str) -> None:
        sys.stderr.write("\r  " + line)
        sys.stderr.flush()
        self.drawn = form

    def _draw_stage(self) -> None:
        elapsed = time.perf_counter() - self.start
        text = f"{self.text}: {self.detail}" if self.detail else self.text
        self._write("stage", f"{text:<70.70} [{self.count:3d}] {elapsed:6.1f} s")

    def _listen(self) -> None:
        """Follow the library's reports and redraw the running stage on a timer."""
        import logging
        import threading

        from .._progress import LOGGER

        self._lock = threading.Lock()

        progress = self

        class _Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                progress.detail = record.getMessage()

        self._handler = _Handler(logging.INFO)
        self._saved_level = LOGGER.level
        LOGGER.addHandler(self._handler)
        LOGGER.setLevel(logging.INFO)
        self._stop = threading.Event()

        def tick(stop: threading.Event) -> None:
            while not stop.wait(self.TICK):
                if self.drawn == "stage":
                    self._draw_stage()

        threading.Thread(target=tick, args=(self._stop,), daemon=True).start()

    def stage(self, text: str) -> None:
        if not self.enabled:
            return
        if self._stop is None:
            self._listen()
        self.count += 1
        self.text, self.detail = text, ""
        self._draw_stage()

    def __call__(self, done: int, total: int, label: str | None = None) -> None:
        if not self.enabled:
            return
        elapsed = time.perf_counter() - self.start
        filled = int(self.WIDTH * done / max(total, 1))
        bar = "#" * filled + "." * (self.WIDTH - filled)
        if label is not None:
            self._write("label", f"{label:<24.24} [{bar}] {done}/{total} {elapsed:6.1f} s")
            return
        if self.first is None:
            self.first = done
        rate = (done - self.first) / elapsed if elapsed > 0 else 0.0
        left = (total - done) / rate if rate > 0 else math.inf
        eta = f"ETA {left:5.0f} s" if math.isfinite(left) else "ETA     ?"
        self._write("rate", f"[{bar}] {done:,}/{total:,} {100 * done / max(total, 1):5.1f} %  "
                            f"{rate:7.1f}/s  {eta}")

    def done(self) -> None:
        if self._stop is not None:
            from .._progress import LOGGER

            self._stop.set()
            self._stop = None
            LOGGER.removeHandler(self._handler)
            LOGGER.setLevel(self._saved_level)
        if self.drawn is not None:
            sys.stderr.write("\r" + " " * self.BLANK[self.drawn] + "\r")
            sys.stderr.flush()
