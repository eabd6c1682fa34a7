"""The utility and efficiency experiments of the MUST paper (Zhao & Liu 2023, §4.2–4.3), done
honestly (``privamp experiment``; the artifacts of :mod:`privamp.reproduce.must2023` run them).

* :func:`bootstrap_experiment` — experiment 1 (Tables 4, 5): DP subsampling bootstrap of the mean
  and variance of N(0, 1) samples (n = 300, m = 30, B = 500 replicates, ε' = 0.1, δ = 1/n);
* :func:`linear_experiment` — experiment 2 (Algorithm 2, Tables 6, 7): DP-SGD linear regression
  on simulated data (n = 1000, b = 200, m = 100, T = 200, C = 3, learning rate 0.04,
  ε' ∈ {0.01, 0.001}, δ = 1/n);
* :func:`logistic_experiment` — experiment 3 (Table 8): DP-SGD logistic regression on the UCI
  Adult data (n = 30,969 training records, b = 500, m = 300, T = 1000, C = 3, learning rate 0.01,
  ε' = 0.0005, δ = 1/n), **with the label excluded from the features** (the data ship with
  privamp: :mod:`privamp.data`);
* :func:`efficiency_experiment` — Tables 9 and 10: distinct records per subsample (min / mean /
  max over 10,000 draws, with the exact mean n·η) and the time to draw a subsample relative to
  sampling without replacement.

What is kept from the paper: the parameters (n, b, m, T, C, learning rate, per-step ε', δ), the
data-generating processes, the metrics and the non-private Poisson baseline. What is changed,
and why (catalogue ``../shared/spec/catalog-mixing-diffusion-must.md``, MUST errata):

1. **Sensitivities** (errata 15): the released statistics are averages over the subsample, so
   their sensitivity is per subsample size (C/B, 2C/B), not per n (C/n, (U − L)/n); the paper's
   noise is ≈ n/m too small (10× in experiments 1–2, ≈ 103× in experiment 3). Substitution is 2C
   per copy; add/remove (Poisson) C. Bootstrap data are clipped to [L, U].
2. **Calibration**: the paper's eq. (9) needs ε < 1 (errata 16); the per-step noise is the exact
   analytic Gaussian calibration at the back-solved ε, and the whole run is accounted by the PLD
   accountant (its certified ε at δ is what ``epsilon`` reports; ``step_delta`` is the exact
   amplified per-step δ'(ε'), with the group terms of WR and MUST).
3. **Label leakage** (errata 14): the authors' logistic script keeps ``income`` among the
   predictors, which is where its 0.98 accuracy comes from; here it is excluded (a non-private
   replication without the leak reaches ≈ 0.76).
4. **MUST.WW** (errata 19): the authors' DP-SGD "WW" branch sampled MUST.OW; here MUST.WW is
   MUST.WW.
5. **Table 9** (errata 9): experiment 2's MUST min and mean are swapped in print.

Every function takes a ``seed`` (all randomness comes from ``numpy.random.default_rng(seed)``),
returns plain dictionaries (what the command line prints), and calls ``progress(done, total,
label)`` if given. The noise is calibrated once per scheme, not per repeat.
"""

from __future__ import annotations

import csv
import io
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..._progress import report
from ..._validation import check_choice, check_int, check_real, read_text_file
from ...applications.bootstrap import DpBootstrap
from ...applications.dpsgd import DPSGD, LinearRegression, LogisticRegression, nonprivate_sgd
from ...errors import InvalidParameterError
from ...relations import NeighbouringRelation
from ...sampling.schemes import SCHEMES as SCHEME_CLASSES
from ...sampling.schemes import Poisson, SamplingScheme, flat_schemes
from .. import paper_values as pv

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_LABEL",
    "PACKAGED_ADULT",
    "PAPER_TABLE9",
    "PAPER_TABLE10",
    "SCHEMES",
    "bootstrap_experiment",
    "efficiency_experiment",
    "linear_experiment",
    "load_adult",
    "logistic_experiment",
    "make_scheme",
]

#: Scheme names (the command line's ``--scheme`` choices).
SCHEMES = tuple(kind for kind in flat_schemes()
                if not getattr(SCHEME_CLASSES[kind], "pld_only", False))

#: Feature columns of ``adult_processed.csv`` (the MUST authors' preprocessing) and its label.
ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "educational.num", "marital.status", "race",
                 "gender", "capital.gain", "capital.loss", "hours.per.week",
                 "occupation_office", "occupation_Prof", "occupation_worker")
ADULT_LABEL = "income"

#: The paper's names of the schemes (its Tables 9 and 10 in :mod:`..paper_values`).
_PAPER_NAMES = {"poisson": "Poisson", "wor": "WOR", "wr": "WR", "must-ow": "MUST.OW",
                "must-wo": "MUST.WO", "must-ww": "MUST.WW"}

#: MUST Table 9 as printed, read from :data:`~privamp.reproduce.paper_values.MUST_TABLE9`:
#: (n, b, m) -> {scheme: (min, mean, max)} distinct records. Experiment 2's MUST.OW / MUST.WW
#: "min" and "mean" are swapped in print (errata 9).
PAPER_TABLE9 = {setting: {kind: tuple(int(v) for v in printed[name])
                          for kind, name in _PAPER_NAMES.items()}
                for setting, printed in pv.MUST_TABLE9.values()}
#: MUST Table 10: % increase of the time to draw a subset relative to WOR (R, 10,000 draws),
#: read from :data:`~privamp.reproduce.paper_values.MUST_TABLE10` (MUST.WO from its footnote,
#: ``MUST_TABLE10_WO``).
PAPER_TABLE10 = {setting: {kind: float(pv.MUST_TABLE10_WO[exp] if name == "MUST.WO"
                                       else pv.MUST_TABLE10[exp][name])
                           for kind, name in _PAPER_NAMES.items()}
                 for exp, (setting, _) in pv.MUST_TABLE9.items()}

Progress = Callable[[int, int, str], None] | None

#: Dataset sizes the simulation experiments accept (their datasets are drawn in memory).
SIMULATED_SIZES = "[1, 10000000]"


def make_scheme(kind: str, *, n: int, m: int, b: int | None = None,
                relation: NeighbouringRelation | str | None = None) -> SamplingScheme:
    """The scheme ``kind`` (one of :data:`SCHEMES`) for n records and subsample size m; Poisson
    has rate m/n (and knows n, which it needs under substitution); MUST needs b.

    >>> make_scheme("must-ow", n=300, b=50, m=30), make_scheme("poisson", n=300, m=30)
    (MUST.OW(n=300, b=50, m=30), Poisson(rate=0.1, n=300))
    """
    kind = check_choice("scheme", kind, SCHEMES)
    n = check_int("n", n, "[1, inf)")
    m = check_int("m", m, "[1, inf)")
    if m > n:
        raise InvalidParameterError("m", f"at most the dataset size n = {n} (a batch larger "
                                         "than the data)", m)
    cls = SCHEME_CLASSES[kind]
    if "b" in cls.reads() and b is None:
        raise InvalidParameterError("b", f"given (the stage-I size) for {kind}", b)
    return cls.at_size(n, m, b)


def _noise_kwargs(step_epsilon, target_epsilon, noise_multiplier, step_delta, paper):
    """How the noise is chosen: the per-step ε' (the paper's value ``paper`` when nothing is
    given), a target ε for the whole run, or a noise multiplier — exactly one."""
    given = [v is not None for v in (step_epsilon, target_epsilon, noise_multiplier)]
    if not any(given):
        step_epsilon = paper
    elif sum(given) != 1:
        raise InvalidParameterError("step_epsilon", "given, or replaced by exactly one of "
                                    "target_epsilon, noise_multiplier", step_epsilon)
    if target_epsilon is not None:
        return {"target_epsilon": target_epsilon}
    if noise_multiplier is not None:
        return {"noise_multiplier": noise_multiplier}
    return {"step_epsilon": step_epsilon, "step_delta": step_delta}


def _summary(values: Sequence[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    return {"mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0}


def _tick(progress: Progress, done: int, total: int, label: str) -> None:
    report("%s: %s of %s", label, done, total)
    if progress is not None:
        progress(done, total, label)


# ---------------------------------------------------------------------------------------------
# experiment 1: the DP subsampling bootstrap
# ---------------------------------------------------------------------------------------------


def bootstrap_experiment(scheme: str = "wor", *, n: int = 300, m: int = 30, b: int = 50,
                         replicates: int = 500, repeats: int = 200,
                         step_epsilon: float | None = None, target_epsilon: float | None = None,
                         noise_multiplier: float | None = None,
                         delta: float | None = None, bounds: tuple[float, float] = (-4.0, 4.0),
                         relation: str | None = None, confidence: float = 0.95, seed: int = 0,
                         baseline: bool = True, progress: Progress = None) -> dict[str, Any]:
    """MUST utility experiment 1 (Tables 4 and 5): ``repeats`` datasets of n i.i.d. N(0, 1)
    values, each estimated by the DP bootstrap (:class:`~privamp.applications.DpBootstrap`)
    with ``replicates`` subsamples drawn by ``scheme``.

    Returns the privacy statement of one dataset's procedure (``epsilon`` at ``delta``, default
    1/n), the noise (``sigma``: standard deviation of the noise on a replicate's released mean,
    Table 4's σ(μ)), and the estimates' mean, SD, bias and RMSE over the repeats (Table 5) with
    the coverage of the confidence intervals; ``baseline`` is the paper's non-private Poisson
    (m/n) bootstrap (plain subsample means and variances), or ``None`` when ``baseline=False``
    (it doubles the running time and does not depend on the scheme).
    """
    repeats = check_int("repeats", repeats, "[2, inf)")
    seed = check_int("seed", seed, "[0, inf)")
    n = check_int("n", n, SIMULATED_SIZES)  # the datasets are simulated in memory
    sch = make_scheme(scheme, n=n, m=m, b=b)  # validates n before 1/n
    delta = 1.0 / n if delta is None else check_real("delta", delta, "(0, 1)")
    noise = _noise_kwargs(step_epsilon, target_epsilon, noise_multiplier, delta, 0.1)
    boot = DpBootstrap(sch, replicates, bounds, delta=delta, relation=relation, **noise)
    rng = np.random.default_rng(seed)
    base = Poisson(m / n)
    means, variances, cover_mean, cover_var = [], [], 0, 0
    base_means, base_vars = [], []
    for r in range(repeats):
        x = rng.normal(0.0, 1.0, size=n)
        res = boot.run(x, rng=rng, confidence=confidence)
        means.append(res.mean)
        variances.append(res.variance)
        cover_mean += res.mean_ci[0] <= 0.0 <= res.mean_ci[1]
        cover_var += res.variance_ci[0] <= 1.0 <= res.variance_ci[1]
        if baseline:
            bm, bv = [], []
            for _ in range(replicates):
                vals = base.sample(n, rng).take(x)
                if vals.size >= 2:
                    bm.append(vals.mean())
                    bv.append(vals.var(ddof=1))
            base_means.append(np.mean(bm))
            base_vars.append(np.mean(bv))
        _tick(progress, r + 1, repeats, f"bootstrap {scheme}")
    sigma_mean, sigma_m2 = boot.noise_std(n)
    st = boot.privacy

    def stats(values, truth):
        arr = np.asarray(values)
        return {**_summary(arr), "bias": float(arr.mean() - truth),
                "rmse": float(math.sqrt(np.mean((arr - truth) ** 2)))}

    mean_stats, var_stats = stats(means, 0.0), stats(variances, 1.0)
    return {
        "experiment": "bootstrap", "scheme": scheme, **_privacy_fields(st),
        "sigma": sigma_mean, "sigma_second_moment": sigma_m2, "noise_multiplier": boot.
        noise_multiplier,
        "mean": mean_stats, "variance": var_stats,
        "rmse": mean_stats["rmse"], "bias": mean_stats["bias"],
        "variance_rmse": var_stats["rmse"], "variance_bias": var_stats["bias"],
        "coverage_mean": cover_mean / repeats, "coverage_variance": cover_var / repeats,
        "confidence": confidence,
        "baseline": {"scheme": "poisson (non-private)", "mean": stats(base_means, 0.0),
                     "variance": stats(base_vars, 1.0)} if baseline else None,
        "parameters": {"n": n, "m": m, "b": b if sch.kind.startswith("must") else None,
                       "replicates": replicates, "repeats": repeats,
                       "step_epsilon": noise.get("step_epsilon"),
                       "target_epsilon": target_epsilon, "noise_multiplier": noise_multiplier,
                       "bounds": list(bounds), "seed": seed},
    }


def _privacy_fields(st) -> dict[str, Any]:
    """The statement's fields (its ``sensitivity`` as ``per_copy_sensitivity``: the logistic
    experiment's "sensitivity" is the classifier's recall, as in the paper's Table 8)."""
    d = st.as_dict()
    return _fields_of(d)


def _sgd_privacy_fields(sgd: DPSGD, delta: float) -> dict[str, Any]:
    """:func:`_privacy_fields` of a DP-SGD run; without accounting (``account_privacy=False``)
    ``epsilon`` and ``accountant`` are ``None``."""
    if sgd.privacy is not None:
        return _privacy_fields(sgd.privacy)
    from ...applications.privacy import describe_scheme, resolve_relations

    base = resolve_relations(sgd.scheme, sgd.relation)[1]
    return _fields_of({"epsilon": None, "epsilon_lower": None, "delta": delta,
                       "relation": sgd.relation.value, "base_relation": base.value,
                       "steps": sgd.steps, "noise_choice": "noise_multiplier (not accounted)",
                       "sampling": describe_scheme(sgd.scheme), "accountant": None,
                       "sensitivity": sgd.sensitivity})


def _fields_of(d: dict[str, Any]) -> dict[str, Any]:
    out = {k: d[k] for k in ("epsilon", "epsilon_lower", "delta", "relation", "base_relation",
                             "steps", "noise_choice", "sampling", "accountant")}
    out["per_copy_sensitivity"] = d["sensitivity"]
    if "step_epsilon" in d:
        out["step_epsilon"], out["step_delta"] = d["step_epsilon"], d["step_delta"]
    return out


# ---------------------------------------------------------------------------------------------
# experiment 2: DP-SGD linear regression
# ---------------------------------------------------------------------------------------------


def linear_experiment(scheme: str = "wor", *, n: int = 1000, b: int = 200, m: int = 100,
                      steps: int = 200, clip_norm: float = 3.0, learning_rate: float = 0.04,
                      step_epsilon: float | None = None, target_epsilon: float | None = None,
                      noise_multiplier: float | None = None,
                      delta: float | None = None, repeats: int = 200,
                      coefficients: Sequence[float] = (1.0, 0.5, 0.2),
                      initial_weights: Sequence[float] = (-1.0, -1.0, -1.0),
                      relation: str | None = None, seed: int = 0, baseline: bool = True,
                      loss_curve: bool = False, account_privacy: bool = True,
                      progress: Progress = None) -> dict[str, Any]:
    """MUST utility experiment 2 (Algorithm 2, Tables 6 and 7): ``repeats`` datasets
    y = β0 + β1 x1 + β2 x2 + N(0, 1), x ~ N(0, I₂), each fitted by DP-SGD and by the
    non-private Poisson baseline (on the same dataset).

    ``rmse`` is the paper's: the square root of the mean training MSE over the last 16
    iterations, averaged over repeats (``rmse_sd`` its SD); ``coefficients`` gives the bias and
    RMSE of each β̂ (Table 7). ``baseline=False`` skips the baseline (``"baseline": None``).
    ``loss_curve=True`` adds ``"loss_curve"``: the training MSE after each step on the first
    dataset (``{"steps": [0, …, T], "loss": [...]}``; the same for the baseline). The first
    dataset depends only on ``seed``, so runs of several schemes with one seed share it (MUST
    Figure 6: "in a single dataset"). The loss reads the raw training data: a non-private
    diagnostic. ``account_privacy=False`` (with ``noise_multiplier``) skips the accounting
    (``"epsilon": None``: no privacy statement; :class:`~privamp.applications.DPSGD`).
    """
    repeats = check_int("repeats", repeats, "[2, inf)")
    seed = check_int("seed", seed, "[0, inf)")
    n = check_int("n", n, SIMULATED_SIZES)  # the datasets are simulated in memory
    sch = make_scheme(scheme, n=n, m=m, b=b)  # validates n before 1/n
    delta = 1.0 / n if delta is None else check_real("delta", delta, "(0, 1)")
    beta = np.asarray(coefficients, dtype=float)
    noise = _noise_kwargs(step_epsilon, target_epsilon, noise_multiplier, delta, 0.01)
    sgd = DPSGD(LinearRegression(), scheme=sch, steps=steps, clip_norm=clip_norm,
                learning_rate=learning_rate, delta=delta, relation=relation,
                account_privacy=account_privacy, **noise)
    base_scheme = Poisson(m / n)
    rng = np.random.default_rng(seed)
    tail = min(16, steps)
    rmse, base_rmse, est, base_est = [], [], [], []
    curves: dict[str, dict[str, list]] = {}
    for r in range(repeats):
        x = rng.normal(size=(n, beta.size - 1))
        X = np.column_stack([np.ones(n), x])
        y = X @ beta + rng.normal(size=n)
        res = sgd.fit(X, y, rng=rng, initial_weights=initial_weights)
        rmse.append(math.sqrt(np.mean(res.loss_history[-tail:])))
        est.append(res.weights)
        if r == 0 and loss_curve:
            curves["dp"] = _curve(res)
        if baseline:
            base = nonprivate_sgd(LinearRegression(), X, y, scheme=base_scheme, steps=steps,
                                  learning_rate=learning_rate, rng=rng,
                                  initial_weights=initial_weights)
            base_rmse.append(math.sqrt(np.mean(base.loss_history[-tail:])))
            base_est.append(base.weights)
            if r == 0 and loss_curve:
                curves["baseline"] = _curve(base)
        _tick(progress, r + 1, repeats, f"linear {scheme}")

    def coef(estimates):
        e = np.asarray(estimates) - beta
        return {"bias": e.mean(axis=0).tolist(),
                "rmse": np.sqrt(np.mean(e * e, axis=0)).tolist()}

    summary = _summary(rmse)
    out = {
        "experiment": "linear", "scheme": scheme, **_sgd_privacy_fields(sgd, delta),
        "sigma": sgd.noise_std, "noise_multiplier": sgd.noise_multiplier,
        "sigma_averaged_gradient": sgd.noise_std / sgd.normaliser(n),
        "rmse": summary["mean"], "rmse_sd": summary["sd"], "coefficients": coef(est),
        "baseline": {"scheme": "poisson (non-private)", "rmse": _summary(base_rmse)["mean"],
                     "rmse_sd": _summary(base_rmse)["sd"], "coefficients": coef(base_est)}
        if baseline else None,
        "parameters": {"n": n, "b": b if sch.kind.startswith("must") else None, "m": m,
                       "steps": steps, "clip_norm": clip_norm, "learning_rate": learning_rate,
                       "step_epsilon": noise.get("step_epsilon"),
                       "target_epsilon": target_epsilon, "noise_multiplier": noise_multiplier,
                       "repeats": repeats, "coefficients": beta.tolist(), "seed": seed},
    }
    _add_curves(out, curves)
    return out


def _curve(result) -> dict[str, list]:
    """The recorded training loss of one fit, as plain lists."""
    return {"steps": result.loss_steps.tolist(), "loss": result.loss_history.tolist()}


def _add_curves(out: dict[str, Any], curves: dict[str, dict[str, list]]) -> None:
    """Put the first repeat's loss curves (if recorded) into an experiment's result."""
    if "dp" in curves:
        out["loss_curve"] = curves["dp"]
    if "baseline" in curves and out.get("baseline") is not None:
        out["baseline"]["loss_curve"] = curves["baseline"]


# ---------------------------------------------------------------------------------------------
# experiment 3: DP-SGD logistic regression on Adult
# ---------------------------------------------------------------------------------------------


#: What the results record as their data when they read the packaged copy.
PACKAGED_ADULT = "packaged: privamp/data/adult_processed.csv.gz"


def _adult_text(path: str | Path | None) -> str:
    """The text of the Adult CSV: the packaged copy (sha256-checked) when ``path`` is
    ``None``, else the file at ``path`` (gzip-compressed when its name ends in ``.gz``)."""
    if path is None:
        from ...data import adult_text

        return adult_text()
    compressed = isinstance(path, str | Path) and str(path).lower().endswith(".gz")
    return read_text_file("data", path, "CSV file", compressed=compressed)


def load_adult(path: str | Path | None = None, *, include_label: bool = False
               ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Read the preprocessed Adult CSV: by default the copy shipped with privamp
    (:mod:`privamp.data`, its sha256 checked), or the file at ``path`` (e.g.
    ``../shared/data/adult_processed.csv``; gzip-compressed when its name ends in ``.gz``).

    Returns (features, labels, feature names): the 13 columns of :data:`ADULT_COLUMNS` (plus the
    label itself when ``include_label`` — the MUST authors' leak, for demonstration only) and
    ``income`` ∈ {0, 1}. Raises :class:`~privamp.errors.InvalidParameterError` (parameter
    ``data``) for a missing file, missing columns or non-numeric values, and
    :class:`~privamp.errors.DataIntegrityError` when the packaged copy is damaged.
    """
    reader = csv.reader(io.StringIO(_adult_text(path), newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise InvalidParameterError("data", "a CSV file with a header row", str(path)) from None
    except csv.Error as exc:
        raise InvalidParameterError("data", "a CSV file", str(path), detail=str(exc)) from None
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise InvalidParameterError("data", "a CSV file", str(path), detail=str(exc)) from None
    needed = (*ADULT_COLUMNS, ADULT_LABEL)
    missing = [c for c in needed if c not in header]
    if missing:
        raise InvalidParameterError(
            "data", "a CSV file with the columns " + ", ".join(needed), str(path),
            detail="missing: " + ", ".join(missing))
    if not rows:
        raise InvalidParameterError("data", "a CSV file with at least one data row", str(path))
    cols = [header.index(c) for c in needed]
    try:
        table = np.array([[float(row[i]) for i in cols] for row in rows if row])
    except (ValueError, IndexError) as exc:
        raise InvalidParameterError("data", "a CSV file of numbers in the required columns",
                                    str(path), detail=str(exc)) from exc
    if not np.all(np.isfinite(table)):
        raise InvalidParameterError("data", "a CSV file of finite numbers", str(path))
    labels = table[:, -1]
    if not np.all((labels == 0) | (labels == 1)):
        raise InvalidParameterError("data", f"a CSV file whose {ADULT_LABEL!r} column is 0 or 1",
                                    str(path))
    names = list(ADULT_COLUMNS)
    features = table[:, :-1]
    if include_label:
        features = table
        names.append(ADULT_LABEL)
    return features, labels, names


def classification_metrics(labels: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    """Accuracy, AUC (Mann–Whitney, ties counted ½), sensitivity, specificity, PPV, NPV and F1
    of the rule "class 1 iff score > ½" (MUST §4.2.3: xᵀβ > 0)."""
    from scipy.stats import rankdata

    y = np.asarray(labels) == 1
    pred = np.asarray(scores) > 0.5
    tp = float(np.sum(pred & y))
    tn = float(np.sum(~pred & ~y))
    fp = float(np.sum(pred & ~y))
    fn = float(np.sum(~pred & y))

    def ratio(a, b):
        return a / b if b > 0 else math.nan

    ranks = rankdata(scores)
    n_pos, n_neg = float(y.sum()), float((~y).sum())
    auc = ratio(ranks[y].sum() - n_pos * (n_pos + 1) / 2, n_pos * n_neg)
    sens, ppv = ratio(tp, tp + fn), ratio(tp, tp + fp)
    return {"accuracy": (tp + tn) / y.size, "auc": auc, "sensitivity": sens,
            "specificity": ratio(tn, tn + fp), "ppv": ppv, "npv": ratio(tn, tn + fn),
            "f1": ratio(2 * sens * ppv, sens + ppv) if tp > 0 else 0.0}


def logistic_experiment(data: str | Path | None = None, scheme: str = "wor", *, b: int = 500,
                        m: int = 300, steps: int = 1000, clip_norm: float = 3.0,
                        learning_rate: float = 0.01, step_epsilon: float | None = None,
                        target_epsilon: float | None = None,
                        noise_multiplier: float | None = None, delta: float | None = None,
                        repeats: int = 5, include_label: bool = False,
                        relation: str | None = None, seed: int = 0, baseline: bool = True,
                        loss_curve: bool = False, account_privacy: bool = True,
                        progress: Progress = None) -> dict[str, Any]:
    """MUST utility experiment 3 (Table 8): logistic regression on Adult by DP-SGD.

    ``data`` is the Adult CSV (:func:`load_adult`; default: the copy shipped with privamp). As
    the paper: the first 3/4 of the rows train (30,969), the last 1/4 test (10,323), no
    shuffling; each column divided by its maximum over the file (these maxima are treated as
    public domain bounds — they are not covered by the privacy statement); an intercept; initial
    weights 1; class 1 iff xᵀβ > 0. Unlike the paper, ``income`` is **not** a feature
    (``include_label=True`` reproduces the leak, for demonstration only). The metrics are
    averaged over ``repeats`` runs (seeds from ``seed``; the paper reports one run);
    ``metrics_sd`` gives their SDs over the runs (0 for one run). ``baseline=False`` skips the
    non-private baseline (``"baseline": None``); ``loss_curve=True`` adds the first run's
    training cross-entropy every ``steps // 100`` steps (``"loss_curve"``, and the
    baseline's), a non-private diagnostic. ``account_privacy=False`` as in
    :func:`linear_experiment`.
    """
    repeats = check_int("repeats", repeats, "[1, inf)")
    seed = check_int("seed", seed, "[0, inf)")
    features, labels, names = load_adult(data, include_label=include_label)
    rows = labels.size
    n_train = (3 * rows) // 4
    if n_train < 2 or rows - n_train < 1:
        raise InvalidParameterError("data", "a CSV file with at least 4 data rows", str(data))
    scale = features.max(axis=0)
    scale[scale == 0] = 1.0
    X_all = np.column_stack([np.ones(rows), features / scale])
    X, y = X_all[:n_train], labels[:n_train]
    X_test, y_test = X_all[n_train:], labels[n_train:]
    delta = 1.0 / n_train if delta is None else check_real("delta", delta, "(0, 1)")
    sch = make_scheme(scheme, n=n_train, m=m, b=b)
    noise = _noise_kwargs(step_epsilon, target_epsilon, noise_multiplier, delta, 0.0005)
    sgd = DPSGD(LogisticRegression(), scheme=sch, steps=steps, clip_norm=clip_norm,
                learning_rate=learning_rate, delta=delta, relation=relation,
                account_privacy=account_privacy, **noise)
    rng = np.random.default_rng(seed)
    w0 = np.ones(X.shape[1])
    model = LogisticRegression()
    runs, base_runs, final_loss = [], [], []
    curves: dict[str, dict[str, list]] = {}
    fine = max(1, steps // 100)
    for r in range(repeats):
        every = fine if r == 0 and loss_curve else max(1, steps // 50)
        res = sgd.fit(X, y, rng=rng, initial_weights=w0, loss_every=every)
        runs.append(classification_metrics(y_test, model.predict(res.weights, X_test)))
        final_loss.append(res.loss_history[-1])
        if r == 0 and loss_curve:
            curves["dp"] = _curve(res)
        if baseline:
            base = nonprivate_sgd(model, X, y, scheme=Poisson(m / n_train), steps=steps,
                                  learning_rate=learning_rate, rng=rng, initial_weights=w0,
                                  loss_every=fine if r == 0 and loss_curve else 0)
            base_runs.append(classification_metrics(y_test, model.predict(base.weights,
                                                                           X_test)))
            if r == 0 and loss_curve:
                curves["baseline"] = _curve(base)
        _tick(progress, r + 1, repeats, f"logistic {scheme}")

    def average(metric_runs):
        # the mean over the runs where the metric is defined; NaN (no warning) when it is
        # defined in none (NPV of a classifier that never predicts 0: 0/0 in every run)
        def mean(values):
            defined = [v for v in values if not math.isnan(v)]
            return float(np.mean(defined)) if defined else math.nan

        return {k: mean([mr[k] for mr in metric_runs]) for k in metric_runs[0]}

    def spread(metric_runs):
        return {k: _summary([mr[k] for mr in metric_runs])["sd"] for k in metric_runs[0]}

    metrics = average(runs)
    out = {
        "experiment": "logistic", "scheme": scheme, **_sgd_privacy_fields(sgd, delta),
        "sigma": sgd.noise_std, "noise_multiplier": sgd.noise_multiplier,
        "sigma_averaged_gradient": sgd.noise_std / sgd.normaliser(n_train),
        **metrics, "accuracy_sd": _summary([mr["accuracy"] for mr in runs])["sd"],
        "metrics_sd": spread(runs),
        "training_loss": float(np.mean(final_loss)),
        "majority_class_accuracy": float(max(y_test.mean(), 1 - y_test.mean())),
        "baseline": {"scheme": "poisson (non-private)", **average(base_runs),
                     "metrics_sd": spread(base_runs)} if baseline else None,
        "parameters": {"data": PACKAGED_ADULT if data is None else str(data),
                       "n_train": n_train, "n_test": rows - n_train, "features": names,
                       "b": b if sch.kind.startswith("must") else None,
                       "m": m, "steps": steps, "clip_norm": clip_norm,
                       "learning_rate": learning_rate, "step_epsilon": step_epsilon,
                       "target_epsilon": target_epsilon, "repeats": repeats,
                       "include_label": include_label, "seed": seed},
    }
    _add_curves(out, curves)
    return out


# ---------------------------------------------------------------------------------------------
# Tables 9 and 10: distinct records and sampling time
# ---------------------------------------------------------------------------------------------


def efficiency_experiment(settings: Sequence[tuple[int, int, int]] | None = None, *,
                          draws: int = 10_000, schemes: Sequence[str] = SCHEMES, seed: int = 0,
                          progress: Progress = None) -> dict[str, Any]:
    """MUST Tables 9 and 10 for each (n, b, m) in ``settings`` (default: the paper's three).

    For each scheme: the number of distinct records in a subsample over ``draws`` draws (min,
    mean, max, and the exact mean n·P(a record is drawn) from the multiplicity law), and the
    mean time of ``scheme.sample`` per draw with its % increase over WOR. Timings depend on the
    machine and on Python overheads (privamp's samplers are NumPy; the paper's are R): compare
    orderings, not numbers.
    """
    draws = check_int("draws", draws, "[1, 10000000]")  # the counts are kept in memory
    seed = check_int("seed", seed, "[0, inf)")
    settings = list(PAPER_TABLE9) if settings is None else [tuple(s) for s in settings]
    schemes = [check_choice("scheme", s, SCHEMES) for s in schemes]
    for n, b, m in settings:  # every setting checked before any timing
        check_int("n", n, SIMULATED_SIZES)
        for kind in schemes:
            make_scheme(kind, n=n, m=m, b=b)
    rng = np.random.default_rng(seed)
    out = []
    total = len(settings) * len(schemes)
    done = 0
    for n, b, m in settings:
        rows = {}
        for kind in schemes:
            sch = make_scheme(kind, n=n, m=m, b=b)
            counts = np.empty(draws, dtype=np.int64)
            for _ in range(min(draws, 50)):  # warm-up (caches, first-call overheads)
                sch.sample(n, rng)
            start = time.perf_counter()
            for i in range(draws):
                counts[i] = sch.sample(n, rng).distinct
            elapsed = time.perf_counter() - start
            rows[kind] = {"min": int(counts.min()), "mean": float(counts.mean()),
                          "max": int(counts.max()), "sd": float(counts.std(ddof=1))
                          if draws > 1 else 0.0, "exact_mean": float(n * sch.eta),
                          "microseconds": 1e6 * elapsed / draws}
            done += 1
            _tick(progress, done, total, f"efficiency n={n}")
        if "wor" in rows:
            base = rows["wor"]["microseconds"]
            for row in rows.values():
                row["percent_vs_wor"] = 100.0 * (row["microseconds"] / base - 1.0)
        paper9 = PAPER_TABLE9.get((n, b, m), {})
        paper10 = PAPER_TABLE10.get((n, b, m), {})
        for kind, row in rows.items():
            if kind in paper9:
                row["paper"] = {"min": paper9[kind][0], "mean": paper9[kind][1],
                                "max": paper9[kind][2], "percent_vs_wor": paper10.get(kind)}
        out.append({"n": n, "b": b, "m": m, "schemes": rows})
    return {"experiment": "efficiency", "draws": draws, "seed": seed, "settings": out}
