"""The papers' printed values, and the errata — used **only** to compare with what privamp
computes (never as inputs of a computation).

Values are transcribed as printed (strings, so that the printed precision is kept), from the
papers in ``../shared/seeds/`` as checked in the catalogue ``../shared/spec/``
(catalogue A: subsampling and RDP; catalogue B: mixing, diffusion and MUST). Where a printed
value is wrong it is kept as printed here; :data:`ERRATA` says what is wrong and the artifact
marks the cell ``erratum``.

Each table is transcribed as text, one printed row a line, and read by :func:`_table`:

>>> _table('''
...     WR, 10 | 0.12 | 5.73e-5
...            | 0.99
...     Poisson | 0
... ''')
{('WR', 10): ('0.12', '5.73e-5', '0.99'), 'Poisson': ('0',)}
"""

from __future__ import annotations

__all__ = [
    "ERRATA",
    "MUST_FIG_S3_CROSSOVERS",
    "MUST_FIG_S3_THRESHOLDS",
    "MUST_TABLE3",
    "MUST_TABLE3_EPS",
    "MUST_TABLE4",
    "MUST_TABLE5",
    "MUST_TABLE6",
    "MUST_TABLE6_RMSE",
    "MUST_TABLE6_RMSE_NONPRIVATE",
    "MUST_TABLE7",
    "MUST_TABLE7_NONPRIVATE",
    "MUST_TABLE8",
    "MUST_TABLE8_METRICS",
    "MUST_TABLE9",
    "MUST_TABLE10",
    "MUST_TABLE10_WO",
]


def _key_part(text: str) -> int | float | str:
    """A part of a row key: a whole number, a number, or the text itself."""
    if text.isdigit():
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def _table(text: str) -> dict:
    """The rows of a table transcribed as text: ``key | cell | cell …`` a line; a line that
    starts with ``|`` continues the row above; blank lines and ``#`` lines are skipped. A key
    ``a, b`` is the tuple ``(a, b)`` (numbers in it become numbers); the cells stay strings.
    Returns key → tuple of cells, in the order of the text."""
    rows: dict = {}
    key = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        head, *cells = (c.strip() for c in line.split("|"))
        if head:
            parts = tuple(_key_part(p.strip()) for p in head.split(","))
            key = parts[0] if len(parts) == 1 else parts
            rows[key] = ()
        rows[key] += tuple(cells)
    return rows


def _nest(rows: dict, outer: int = 1) -> dict:
    """``{(a, b): cells}`` → ``{a: {b: cells}}``: the first ``outer`` parts of each key (a
    tuple) select the outer dict, the rest the inner one (a single part unwrapped)."""
    nested: dict = {}
    for key, cells in rows.items():
        head, tail = key[:outer], key[outer:]
        inner = nested.setdefault(head[0] if outer == 1 else head, {})
        inner[tail[0] if len(tail) == 1 else tail] = cells
    return nested


# ---------------------------------------------------------------------------------------------
# MUST (Zhao & Liu 2023)
# ---------------------------------------------------------------------------------------------

#: Table 3 (n = 1000, m = 400, b = 500): base ε of the six columns.
MUST_TABLE3_EPS = (0.05, 0.5, 1.0, 2.0, 3.0, 4.5)

#: Table 3: (mechanism, Δ/σ) → row → six printed "ε, δ" cells ("base" is M itself).
MUST_TABLE3 = {block: {row: list(cells) for row, cells in rows.items()}
               for block, rows in _nest(_table("""
    laplace, 0.25, base     | 0.050, 0.095 | 0.500, 0 | 1.000, 0
                            | 2.000, 0 | 3.000, 0 | 4.500, 0
    laplace, 0.25, WOR      | 0.020, 0.038 | 0.231, 0 | 0.523, 0
                            | 1.269, 0 | 2.156, 0 | 3.600, 0
    laplace, 0.25, WR       | 0.017, 0.039 | 0.194, 0.001 | 0.449, 7.47e-6
                            | 1.134, 5.65e-11 | 1.987, 7.44e-17 | 3.413, 1.22e-26
    laplace, 0.25, MUST.OW  | 0.014, 0.039 | 0.164, 0.003 | 0.388, 9.18e-5
                            | 1.015, 1.06e-8 | 1.834, 2.18e-13 | 3.240, 2.26e-21
    laplace, 0.25, MUST.WW  | 0.012, 0.039 | 0.145, 0.006 | 0.346, 6.07e-4
                            | 0.932, 4.05e-6 | 1.722, 1.84e-8 | 3.111, 3.44e-12
    gaussian, 0.25, base    | 0.050, 0.078 | 0.500, 0.003 | 1.000, 2.92e-6
                            | 2.000, 5.09e-17 | 3.000, 1.62e-34 | 4.500, 1.27e-73
    gaussian, 0.25, WOR     | 0.020, 0.031 | 0.231, 0.001 | 0.523, 1.17e-6
                            | 1.269, 2.04e-17 | 2.156, 6.50e-35 | 3.600, 5.06e-74
    gaussian, 0.25, WR      | 0.017, 0.033 | 0.194, 0.005 | 0.449, 0.001
                            | 1.134, 3.59e-5 | 1.987, 2.17e-6 | 3.413, 4.64e-8
    gaussian, 0.25, MUST.OW | 0.014, 0.034 | 0.164, 0.008 | 0.388, 0.002
                            | 1.015, 1.79e-4 | 1.834, 1.89e-5 | 3.240, 8.28e-7
    gaussian, 0.25, MUST.WW | 0.012, 0.034 | 0.145, 0.011 | 0.346, 0.004
                            | 0.932, 6.21e-4 | 1.722, 1.31e-4 | 3.111, 1.66e-5
    laplace, 1.0, base      | 0.050, 0.378 | 0.500, 0.221 | 1.000, 0
                            | 2.000, 0 | 3.000, 0 | 4.500, 0
    laplace, 1.0, WOR       | 0.020, 0.151 | 0.231, 0.088 | 0.523, 0
                            | 1.269, 0 | 2.156, 0 | 3.600, 0
    laplace, 1.0, WR        | 0.017, 0.141 | 0.194, 0.093 | 0.449, 0.026
                            | 1.134, 0.003 | 1.987, 3.17e-4 | 3.413, 1.45e-5
    laplace, 1.0, MUST.OW   | 0.014, 0.132 | 0.164, 0.095 | 0.388, 0.044
                            | 1.015, 0.010 | 1.834, 0.002 | 3.240, 1.83e-4
    laplace, 1.0, MUST.WW   | 0.012, 0.123 | 0.145, 0.094 | 0.346, 0.052
                            | 0.932, 0.018 | 1.722, 0.006 | 3.111, 0.001
    gaussian, 1.0, base     | 0.050, 0.368 | 0.500, 0.238 | 1.000, 0.127
                            | 2.000, 0.021 | 3.000, 0.002 | 4.500, 5.87e-6
    gaussian, 1.0, WOR      | 0.020, 0.147 | 0.231, 0.095 | 0.523, 0.051
                            | 1.269, 0.008 | 2.156, 6.15e-4 | 3.600, 2.35e-6
    gaussian, 1.0, WR       | 0.017, 0.142 | 0.194, 0.103 | 0.449, 0.068
                            | 1.134, 0.029 | 1.987, 0.015 | 3.413, 0.006
    gaussian, 1.0, MUST.OW  | 0.014, 0.136 | 0.164, 0.106 | 0.388, 0.079
                            | 1.015, 0.045 | 1.834, 0.028 | 3.240, 0.015
    # printed as a copy of the Laplace Δ/σ = 1 MUST.WW row: erratum MUST-8
    gaussian, 1.0, MUST.WW  | 0.012, 0.123 | 0.145, 0.094 | 0.346, 0.052
                            | 0.932, 0.018 | 1.722, 0.006 | 3.111, 0.001
"""), outer=2).items()}

#: Table 4 (n = 300, m = 30, ε' = 0.1, δ = 1/300): scheme → (σ for μ, σ for τ², δ');
#: MUST rows are keyed ("MUST.OW", b).
MUST_TABLE4 = _table("""
    Poisson      | 0.13 | 1.02 | 0.0003
    WOR          | 0.13 | 1.02 | 0.0003
    WR           | 0.12 | 0.99 | 5.73e-5
    MUST.OW, 10  | 0.06 | 0.50 | 0.0064
    MUST.OW, 20  | 0.08 | 0.67 | 0.0022
    MUST.OW, 30  | 0.09 | 0.75 | 0.0011
    MUST.OW, 50  | 0.11 | 0.84 | 0.0005
    MUST.OW, 100 | 0.12 | 0.93 | 0.0002
    MUST.WW, 10  | 0.06 | 0.50 | 0.0065
    MUST.WW, 20  | 0.08 | 0.66 | 0.0024
    MUST.WW, 30  | 0.09 | 0.74 | 0.0013
    MUST.WW, 50  | 0.10 | 0.82 | 0.0007
    MUST.WW, 100 | 0.11 | 0.90 | 0.0003
""")

#: Table 5 (n = 300, m = 30, T = 500 subsamples, 200 simulated N(0, 1) data sets): row →
#: (mean of μ̂, SD of μ̂, mean of τ̂², SD of τ̂²) over the data sets; MUST rows keyed
#: (scheme, b). (b = 70 is in Table 5 but not in Table 4.)
MUST_TABLE5 = _table("""
    Poisson (non-private) | 0.0020 | 0.059 | 0.990 | 0.084
    Poisson               | 0.0024 | 0.058 | 0.989 | 0.093
    WOR                   | 0.0025 | 0.058 | 0.991 | 0.092
    WR                    | 0.0026 | 0.058 | 0.984 | 0.094
    MUST.OW, 10           | 0.0027 | 0.058 | 0.886 | 0.082
    MUST.OW, 20           | 0.0007 | 0.061 | 0.943 | 0.086
    MUST.OW, 30           | 0.0013 | 0.058 | 0.958 | 0.090
    MUST.OW, 50           | 0.0025 | 0.057 | 0.969 | 0.093
    MUST.OW, 70           | 0.0032 | 0.059 | 0.971 | 0.093
    MUST.OW, 100          | 0.0022 | 0.060 | 0.984 | 0.096
    MUST.WW, 10           | 0.0003 | 0.060 | 0.889 | 0.081
    MUST.WW, 20           | 0.0013 | 0.059 | 0.935 | 0.086
    MUST.WW, 30           | 0.0009 | 0.059 | 0.956 | 0.090
    MUST.WW, 50           | 0.0010 | 0.059 | 0.965 | 0.088
    MUST.WW, 70           | 0.0027 | 0.060 | 0.971 | 0.085
    MUST.WW, 100          | 0.0025 | 0.058 | 0.972 | 0.096
""")

#: Table 6, privacy columns (n = 1000, b = 200, m = 100, C = 3, δ = 1/n): scheme →
#: {ε': (σ, δ')}. (The RMSE columns: :data:`MUST_TABLE6_RMSE`.)
MUST_TABLE6 = _nest(_table("""
    Poisson, 0.01  | 0.118 | 0.0001
    Poisson, 0.001 | 1.138 | 0.0001
    WOR, 0.01      | 0.118 | 0.0001
    WOR, 0.001     | 1.138 | 0.0001
    WR, 0.01       | 0.113 | 0.095
    WR, 0.001      | 1.084 | 0.080
    MUST.OW, 0.01  | 0.094 | 0.079
    MUST.OW, 0.001 | 0.898 | 0.073
    MUST.WW, 0.01  | 0.091 | 0.076
    MUST.WW, 0.001 | 0.865 | 0.071
"""))

#: Table 6, RMSE columns (200 data sets, T = 200): scheme → {ε': (mean RMSE of ŷ, SD)}.
MUST_TABLE6_RMSE = _nest(_table("""
    Poisson, 0.01  | 1.000 | 0.022
    Poisson, 0.001 | 1.036 | 0.037
    WOR, 0.01      | 1.001 | 0.023
    WOR, 0.001     | 1.030 | 0.033
    WR, 0.01       | 0.997 | 0.022
    WR, 0.001      | 1.032 | 0.029
    MUST.OW, 0.01  | 0.997 | 0.024
    MUST.OW, 0.001 | 1.031 | 0.032
    MUST.WW, 0.01  | 0.999 | 0.023
    MUST.WW, 0.001 | 1.017 | 0.025
"""))
#: Table 6's note: the non-private Poisson baseline's mean RMSE (SD).
MUST_TABLE6_RMSE_NONPRIVATE = ("0.998", "0.024")

#: Table 7 (β = (1, 0.5, 0.2), 200 data sets): scheme → {ε': ((bias of β̂0, β̂1, β̂2),
#: (RMSE of β̂0, β̂1, β̂2))}; transcribed as the six cells bias, bias, bias, RMSE, RMSE, RMSE.
MUST_TABLE7 = {scheme: {eps: (cells[:3], cells[3:]) for eps, cells in by_eps.items()}
               for scheme, by_eps in _nest(_table("""
    Poisson, 0.01  | -0.0024 | 0.0029 | 0.0004 | 0.044 | 0.044 | 0.042
    Poisson, 0.001 | -0.0038 | -0.0055 | -0.0122 | 0.152 | 0.174 | 0.168
    WOR, 0.01      | 0.0002 | 0.0023 | -0.0001 | 0.040 | 0.043 | 0.041
    WOR, 0.001     | -0.0059 | 0.0028 | -0.0068 | 0.150 | 0.164 | 0.159
    WR, 0.01       | 0.0011 | -0.0001 | 0.0043 | 0.039 | 0.042 | 0.043
    WR, 0.001      | 0.0061 | -0.0082 | -0.0200 | 0.142 | 0.164 | 0.156
    MUST.OW, 0.01  | 0.0008 | 0.0046 | -0.0036 | 0.038 | 0.043 | 0.042
    MUST.OW, 0.001 | 0.0010 | -0.0078 | -0.0023 | 0.107 | 0.125 | 0.125
    MUST.WW, 0.01  | 0.0035 | 0.0012 | -0.0006 | 0.041 | 0.042 | 0.044
    MUST.WW, 0.001 | 0.0175 | -0.0144 | 0.0018 | 0.106 | 0.125 | 0.120
""")).items()}
#: Table 7's note: the non-private Poisson baseline's (bias, RMSE) of (β̂0, β̂1, β̂2).
MUST_TABLE7_NONPRIVATE = (("0.006", "0.001", "0.001"), ("0.037", "0.034", "0.038"))

#: Table 8, privacy columns (n = 30,969, b = 500, m = 300, ε' = 0.0005, C = 3, δ = 1/n):
#: scheme → (σ·m, δ_c lower, δ_c upper at ε_c = 2 after k = 1000 iterations).
MUST_TABLE8 = _table("""
    Poisson | 2.654 | 0 | 4.17e-6
    WOR     | 2.654 | 0 | 3.79e-7
    WR      | 2.641 | 0 | 1.28e-6
    MUST.OW | 2.013 | 0 | 8.49e-6
    MUST.WW | 2.006 | 0 | 1.37e-5
""")

#: Table 8, prediction columns (one run; test set of 10,323 records): row → (accuracy,
#: sensitivity, specificity, PPV, NPV, F1). Obtained with the label among the features
#: (erratum MUST-14).
MUST_TABLE8_METRICS = _table("""
    non-private Poisson | 0.979 | 0.923 | 0.999 | 0.997 | 0.974 | 0.959
    Poisson             | 0.976 | 0.911 | 0.999 | 0.997 | 0.970 | 0.952
    WOR                 | 0.978 | 0.920 | 0.999 | 0.997 | 0.973 | 0.957
    WR                  | 0.979 | 0.923 | 0.999 | 0.997 | 0.974 | 0.959
    MUST.OW             | 0.981 | 0.931 | 0.999 | 0.997 | 0.976 | 0.963
    MUST.WW             | 0.977 | 0.915 | 0.999 | 0.997 | 0.971 | 0.954
""")

#: Table 9 (10,000 Monte-Carlo draws): experiment → (n, b, m), then scheme → (min, mean, max)
#: of the number of distinct records in the subsample.
_TABLE9_SETTINGS = {1: (300, 50, 30), 2: (1000, 200, 100), 3: (30969, 500, 300)}
MUST_TABLE9 = {exp: (_TABLE9_SETTINGS[exp], printed)
               for exp, printed in _nest(_table("""
    1, Poisson | 14 | 30 | 50
    1, WOR     | 30 | 30 | 30
    1, WR      | 22 | 29 | 30
    1, MUST.WO | 23 | 29 | 30
    1, MUST.OW | 15 | 23 | 30
    1, MUST.WW | 14 | 22 | 28
    2, Poisson | 66 | 100 | 137
    2, WOR     | 100 | 100 | 100
    2, WR      | 87 | 95 | 100
    2, MUST.WO | 86 | 95 | 100
    # min and mean printed swapped (min > mean): erratum MUST-9
    2, MUST.OW | 79 | 65 | 92
    2, MUST.WW | 76 | 63 | 87
    3, Poisson | 235 | 300 | 367
    3, WOR     | 300 | 300 | 300
    3, WR      | 292 | 299 | 300
    3, MUST.WO | 292 | 299 | 300
    3, MUST.OW | 204 | 226 | 246
    3, MUST.WW | 203 | 225 | 247
""")).items()}

#: Table 10: % increase of the time to draw one subset relative to WOR (R, the authors'
#: machine): experiment → scheme → printed value.
MUST_TABLE10 = {exp: {scheme: cells[0] for scheme, cells in row.items()}
                for exp, row in _nest(_table("""
    1, WOR     | 0
    1, WR      | 23.08
    1, MUST.WW | 53.85
    1, MUST.OW | 69.23
    1, Poisson | 115.38
    2, WOR     | 0
    2, WR      | 11.11
    2, MUST.WW | 72.22
    2, MUST.OW | 111.11
    2, Poisson | 350.00
    3, WOR     | 0
    3, WR      | 110.34
    3, MUST.WW | 93.10
    3, MUST.OW | 189.66
    3, Poisson | 6748.28
""")).items()}
#: Table 10's footnote: MUST.WO ("MIST.WO") in experiments 1–3.
MUST_TABLE10_WO = {1: "61.54", 2: "88.89", 3: "100.00"}

#: Supplement S8 (Figure S3), Δ/σ = 1: δ' < δ "only for δ > threshold" (scheme → printed).
MUST_FIG_S3_THRESHOLDS = {kind: {scheme: cells[0] for scheme, cells in row.items()}
                          for kind, row in _nest(_table("""
    laplace, WR       | 0.039
    laplace, MUST.OW  | 0.058
    laplace, MUST.WW  | 0.068
    gaussian, WR      | 0.036
    gaussian, MUST.OW | 0.060
    gaussian, MUST.WW | 0.070
""")).items()}
#: Supplement S8: the δ' curves cross "around" (δ, δ') (Δ/σ = 1).
MUST_FIG_S3_CROSSOVERS = {"laplace": ("0.25", "0.10"), "gaussian": ("0.23", "0.10")}

# ---------------------------------------------------------------------------------------------
# errata
# ---------------------------------------------------------------------------------------------

#: key → (paper, where, what is wrong, source); the sources: the catalogues' errata lists
#: (catalogue A §7, catalogue B §3) or "found by privamp". Transcribed as ``key | paper |
#: source``, then ``| where``, then what is wrong (its lines joined by spaces).
ERRATA = {key: (paper, where, " ".join(what), source)
          for key, (paper, source, where, *what) in _table("""
    BBG-E17        | bbg2018 | catalogue A §7 E17
                   | Figure 1 (a)–(e)
                   | no parameter values anywhere (captions only); privamp chooses them and states
                   | them on each figure
    BBG-E1         | bbg2018 | catalogue A §7 E1
                   | §5, ψ_p
                   | D_{e^ε}(R_p(0)‖R_p(1)) = [p − e^ε(1 − p)]_+ is wrong for p < ½; the profile of
                   | randomized response is ψ_{max(p, 1−p)}
    W-E18          | wang2019 | catalogue A §7 E18
                   | RDP and composition figures
                   | σ and b given, but the sampling ratio γ, δ, the order range and the number of
                   | compositions are missing; two panels are both labelled (a)
    W-E2           | wang2019 | catalogue A §7 E2
                   | 'RDP ⇒ (ε, δ)' slide
                   | the conversion is printed with ε_M(α − 1) instead of ε_M(α)
    W-fig2         | wang2019 | catalogue A §7 W-20
                   | Figure 'Negative χ^α divergence in Poisson distribution'
                   | no parameters given; privamp uses Poisson(0.5) against Poisson(1) (catalogue
                   | W-14)
    BBGG-numbering | bbgg2019 | catalogue B §1.9
                   | §3 text
                   | the text calls the implication diagram 'Figure 2' and the local-DP table 'Table
                   | 2'; the captions say Figure 1 and Figure 2
    BBGG-thm8      | bbgg2019 | found by privamp (issue 6, docs/architecture.md)
                   | sentence after Theorem 8
                   | the parameter choice θ = log(1 + dΔ²/(2ϵR²)) satisfies the theorem's condition
                   | θR² ≤ 4dρ² only when dΔ²/(2ϵR²) ≤ 2; beyond it E_OU/E_GM exceeds 1 at small t
                   | (the bound at t = 1 still holds)
    BBGG-thm4      | bbgg2019 | catalogue B §1.5, §1.9
                   | after Theorem 4
                   | eq. (3) is a loose relaxation (AM–GM) of the optimal path in eq. (2); 'for L >
                   | 1 the sum will diverge' is loose (finite r)
    MUST-1         | must2023 | catalogue B §3 #1
                   | Theorem 5(c)
                   | labelled 'for M∘MUST.OW(n, b, m)' but the formulas are those of MUST.WW (Table
                   | 2, S1, S5, the authors' code)
    MUST-2         | must2023 | catalogue B §3 #2
                   | Definition 5
                   | type-I weak amplification is printed with the strong condition and dilution
                   | with δ' < δ; Figure 3's caption fixes them (type I: ε' < ε, δ' > δ; dilution:
                   | both larger); the boundary δ' = δ is unspecified (privamp: counts as met)
    MUST-8         | must2023 | catalogue B §3 #8
                   | Table 3, Gaussian Δ/σ = 1, ∘MUST.WW row
                   | the δ' values are a copy of the Laplace Δ/σ = 1 MUST.WW row; correct: 0.129,
                   | 0.105, 0.0828, 0.0534, 0.0374, 0.0228
    MUST-9         | must2023 | catalogue B §3 #9
                   | Table 9, experiment 2, MUST.OW and MUST.WW
                   | 'min' and 'mean' are swapped (min 79/76 > mean 65/63)
    MUST-10        | must2023 | catalogue B §3 #10
                   | §4.3 text vs Table 10
                   | the text says Poisson took 305% longer in experiment 2; the table says 350.00
    MUST-12        | must2023 | catalogue B §3 #12
                   | Figure 5
                   | first row labelled 'MUST.WO'; it is MUST.OW (text, Figure S1)
    MUST-13        | must2023 | catalogue B §3 #13
                   | §4.1 text on Figure 5
                   | 'η increases with b and decreases with m': η increases with m too
    MUST-14        | must2023 | catalogue B §3 #14
                   | Table 8, prediction columns (the authors' logistic script)
                   | the response income is left among the predictors (X_train = adult_train[,-23]
                   | on a 14-column frame): the printed accuracy 0.98 comes from the label; without
                   | it logistic regression reaches ≈ 0.76 on the test set (the majority class is
                   | 0.74)
    MUST-15        | must2023 | catalogue B §3 #15
                   | Experiments 1–3 (Tables 4, 6, 8)
                   | sensitivities divided by n instead of the subsample size: the released
                   | statistics are under-noised by about n/m relative to the claimed ε'
    MUST-16        | must2023 | catalogue B §3 #16
                   | Experiments 1–3, Eq. (9)
                   | the classical calibration σ = Δ√(2 log(1.25/δ))/ε is used with ε ≥ 1, where it
                   | is not valid (footnote 4)
    MUST-17        | must2023 | catalogue B §3 #17
                   | Tables 4 and 6, δ'
                   | δ' is η·δ (nominal δ) for Poisson/WOR but the exact-profile sum for WR/MUST;
                   | Table 6 uses θ_u = u·C/σ although σ was calibrated for sensitivity C/n
    MUST-18        | must2023 | catalogue B §3 #18
                   | Table 8, (δ_{c,L}, δ_{c,U})
                   | not reproducible: the noise multiplier fed to the accountant is not stated;
                   | with the natural σ·m/C the bounds are orders of magnitude larger, WOR cannot be
                   | below Poisson at equal σ, and the zero lower bounds are the clipping of the
                   | accountant's error term
    MUST-19        | must2023 | catalogue B §3 #19
                   | Tables 6–8, Figures 6 and S4 (the authors' DP-SGD code)
                   | the 'WW' branch samples MUST.OW (RUB(1:n, b, m)) with the noise calibrated for
                   | MUST.WW: the printed MUST.WW utilities are MUST.OW sampling (privamp samples
                   | MUST.WW)
    MUST-20        | must2023 | catalogue B §3 #20
                   | Algorithm 1 (Fourier accountant)
                   | omits the truncation/aliasing error term; the point estimate of step 7 is not a
                   | bound (privamp adds the term)
    MUST-F4        | must2023 | found by privamp reproduce
                   | §4.1 text on Figure 4
                   | 'WR and the MUST procedures visit the type I weak quadrant for a minor portion
                   | of each curve' does not hold for the Gaussian Δ/σ = 1 panel: there δ' − δ is
                   | visibly positive (above 1% of the axis range) on 65–76% of the base-ε grid
                   | 0.01–6; it holds for the other three panels
    MUST-F5        | must2023 | found by privamp reproduce
                   | §4.1 text on Figure 5
                   | 'MUST.WW yields smaller δ' − δ and thus a stronger PA effect on δ than
                   | MUST.OW': on the whole (b, m) grid of Figure 5 MUST.WW's δ' − δ is larger, for
                   | both mechanisms (as in Table 3, where δ'_WW > δ'_OW from ε = 1 on)
    MUST-F5b       | must2023 | found by privamp reproduce
                   | §4.1 text on Figure 5
                   | 'δ' − δ increases with m and b': it decreases with b on the whole grid (both
                   | schemes, both mechanisms; fewer repeated records); it does increase with m
    MUST-U1        | must2023 | found by privamp reproduce
                   | §4.2.2 text on Table 6 and Figure 6
                   | 'the RMSE of DP-SGD is slightly larger than the non-private baseline' and 'the
                   | training loss converged to similar levels as the non-private SGD' hold only for
                   | the paper's under-noised gradients (MUST-15): with noise valid for ε' = 0.001
                   | per iteration the RMSE of ŷ and the final training loss are well above the
                   | non-private level (must-table6-rmse, must-fig6)
    MUST-S8        | must2023 | found by privamp reproduce
                   | Supplement S8 (Figure S3) text
                   | 'δ' < δ only for δ > 0.039 / 0.058 / 0.068 (Laplace), 0.036 / 0.060 / 0.070
                   | (Gaussian)': these are read off the 0.01 grid of base ε; the exact crossings
                   | are at δ = 0.0376 / 0.0572 / 0.0642 and 0.0353 / 0.0596 / 0.0691, so δ' < δ
                   | also holds a little below the printed thresholds
    MUST-S7        | must2023 | found by privamp (issue 5, pld/fourier.py)
                   | Supplement S7 / Figure S2
                   | 'the FA algorithm produced numerical errors in the case of MUST.WW': with a
                   | log-sum-exp loss and exact cell masses it runs without trouble
""").items()}
