"""Plots that cannot mislead (issue 21, item 4), generated from the plot commands.

For every ``privamp plot`` subcommand (the list comes from the command-line parser, so that a
new subcommand fails here until it gets cheap parameters below): the figure is produced, taken
back as a matplotlib figure (``save_figure`` is wrapped to keep it), and

* no legend covers data — checked independently of the policy in
  :func:`privamp.plots.place_legends`: every data line is sampled densely in display space and
  no sample may fall inside a legend box;
* the figure's texts (titles, notes, axis labels, legend labels) say its parameters: δ or ε,
  the neighbouring relation, and the number of steps where the command takes it.

Plus unit tests of the policy itself.
"""

from __future__ import annotations

import argparse

import numpy as np
import pytest

import privamp.plots as plots
from privamp.cli import build_parser, main

matplotlib = pytest.importorskip("matplotlib")

#: Cheap parameters of every plot subcommand (each figure in a few seconds).
CHEAP = {
    "profile": "--mechanism gaussian --sigma 1 --sampling poisson --rate 0.01",
    "composition": "--mechanism gaussian --sigma 1 --n 1000 --m 10 --max-steps 100 --points 3 "
                   "--schemes poisson wor --accountants pld",
    "rdp": "--max-order 64",
    "ou-mse": "--t-max 2",
    "aligned": "--mechanism gaussian --sigma 1 --n 1000 --b 500 --m 400 --points 60",
    "delta": "--mechanism gaussian --sigma 1 --sampling poisson --rate 0.01 --steps 10 100 "
             "--points 3 --eps-min 0.5 --eps-max 2",
    "sweep": "{table} --x steps --y epsilon --hue sampling --where delta=1e-5",
    "tradeoff": "--mechanism gaussian --sigma 1 --n 1000 --m 10 --steps 10 --points 40",
}

#: What each figure's texts must mention (each entry: any one of the words). δ or ε always;
#: the relation where the accounting has one; the steps where the command takes them.
DELTA_OR_EPS = ("δ", "ε", "ϵ")
RELATION = ("add/remove", "substitution")
MENTIONS = {
    "profile": [DELTA_OR_EPS, RELATION, ("σ",), ("Poisson, q = 0.01",)],
    "composition": [DELTA_OR_EPS, RELATION, ("steps",), ("δ = 1e-05",), ("σ = 1",)],
    "rdp": [DELTA_OR_EPS, RELATION, ("σ = 5",), ("γ = 0.001",)],
    "ou-mse": [DELTA_OR_EPS, ("sensitivity",), ("d = 1",)],
    "aligned": [DELTA_OR_EPS, ("substitut",), ("σ = 1",), ("n=1000",)],
    "delta": [DELTA_OR_EPS, RELATION, ("10, 100 steps",), ("Poisson, q = 0.01",)],
    "sweep": [DELTA_OR_EPS, RELATION, ("steps",), ("δ = 1e-5",), ("σ = 1",)],
    "tradeoff": [DELTA_OR_EPS, RELATION, ("10 steps",), ("σ = 1",)],
}


def plot_subcommands() -> list[str]:
    parser = build_parser(["plot", "--help"])
    plot = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub = plot.choices["plot"]
    return sorted(next(a for a in sub._actions
                       if isinstance(a, argparse._SubParsersAction)).choices)


def test_every_plot_subcommand_has_cheap_parameters():
    assert set(plot_subcommands()) == set(CHEAP), "give the new plot subcommand CHEAP params"


@pytest.fixture(scope="module")
def sweep_table(tmp_path_factory):
    pytest.importorskip("pyarrow")
    from privamp.sweep.batch import evaluate
    from privamp.sweep.grid import expand
    from privamp.sweep.table import to_table, write_table

    rows = evaluate(expand({"mechanism": "gaussian", "sigma": 1.0, "steps": [10, 100],
                            "delta": [1e-5, 1e-6]},
                           [{"sampling": "poisson", "rate": 0.01},
                            {"sampling": "wor", "n": 1000, "m": 10}]))
    path = tmp_path_factory.mktemp("sweep") / "small.csv"
    write_table(to_table(rows), path)
    return path


def produce(name: str, out, monkeypatch, table=None):
    """Run ``privamp plot NAME`` with its cheap parameters; the saved figure."""
    kept = []
    save = plots.save_figure

    def keep(fig, path, **kw):
        save(fig, path, **kw)
        kept.append(fig)

    monkeypatch.setattr(plots, "save_figure", keep)
    argv = ["plot", name, *CHEAP[name].format(table=table).split(), "--out", str(out)]
    assert main(argv) == 0
    assert len(kept) == 1 and out.stat().st_size > 10_000
    return kept[0]


def figure_texts(fig) -> str:
    texts = [t.get_text() for t in fig.texts]
    if fig._suptitle is not None:
        texts.append(fig._suptitle.get_text())
    for ax in fig.axes:
        texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        texts += [t.get_text() for t in ax.texts]
        if ax.get_legend() is not None:
            texts += [t.get_text() for t in ax.get_legend().get_texts()]
    return "\n".join(texts)


def dense_points(xy: np.ndarray, per_segment: int = 40) -> np.ndarray:
    """Points along a polyline (display coordinates), ``per_segment`` per segment; segments
    touching a non-finite point are not drawn by matplotlib and are skipped."""
    out = [xy[np.isfinite(xy).all(axis=1)]]
    a, b = xy[:-1], xy[1:]
    ok = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    t = np.linspace(0.0, 1.0, per_segment)[:, None, None]
    out.append((a[ok] + t * (b[ok] - a[ok])).reshape(-1, 2))
    return np.concatenate(out)


def data_points(ax) -> np.ndarray:
    """Display points of every data artist of ``ax``: lines (reference lines too), the
    outlines of filled bands and scatter points."""
    pts = [np.empty((0, 2))]
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        pts.append(dense_points(xy) if line.get_linestyle() not in ("None", "none", "")
                   else xy[np.isfinite(xy).all(axis=1)])
    for coll in ax.collections:
        if isinstance(coll, matplotlib.collections.PathCollection):
            pts.append(coll.get_offset_transform().transform(coll.get_offsets()))
        elif isinstance(coll, matplotlib.collections.PolyCollection):
            for path in coll.get_paths():
                pts.append(dense_points(coll.get_transform().transform(path.vertices)))
    return np.concatenate(pts)


def covered(fig) -> list[str]:
    """Titles of the axes whose legend box contains a data point (shrunk by a pixel: a
    curve touching the box's edge is not under the legend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # saved figures are closed: draw them again with Agg
    canvas.draw()
    renderer = canvas.get_renderer()
    bad = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        p = data_points(ax)
        inside = ((p[:, 0] > box.x0 + 1) & (p[:, 0] < box.x1 - 1) & (p[:, 1] > box.y0 + 1)
                  & (p[:, 1] < box.y1 - 1))
        if inside.any():
            bad.append(ax.get_title())
    return bad


@pytest.mark.parametrize("name", sorted(CHEAP))
def test_plot_figure_says_its_parameters_and_no_legend_covers_data(name, tmp_path,
                                                                    monkeypatch, request):
    table = request.getfixturevalue("sweep_table") if name == "sweep" else None
    fig = produce(name, tmp_path / f"{name}.png", monkeypatch, table)
    assert covered(fig) == []
    text = figure_texts(fig)
    for words in MENTIONS[name]:
        assert any(w in text for w in words), (name, words, text)
    assert "{'" not in text and "rate=" not in text  # no raw parameter dumps


def test_sweep_figure_states_its_filters_and_has_a_title(tmp_path, monkeypatch, sweep_table):
    fig = produce("sweep", tmp_path / "s.png", monkeypatch, sweep_table)
    assert fig.axes[0].get_title()
    assert "Rows with δ = 1e-5" in figure_texts(fig)


# ---- the policy ------------------------------------------------------------------------------


def _diagonal_figure(loc: str):
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(5, 4), layout="constrained")
    x = np.linspace(0, 1, 50)
    ax.plot(x, x, label="through the upper right")
    ax.plot(x, 0.9 * x, label="just under it")
    ax.legend(loc=loc)
    return fig, ax


def test_a_legend_on_a_curve_moves_outside_and_the_figure_widens():
    fig, ax = _diagonal_figure("upper right")
    assert plots.legend_covers_data(ax)
    width = fig.get_figwidth()
    assert plots.place_legends(fig) == [ax]
    assert not plots.legend_covers_data(ax) and covered(fig) == []
    assert fig.get_figwidth() > width
    fig.canvas.draw()
    box = ax.get_legend().get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= ax.get_window_extent().x1  # right of the axes
    plots.pyplot().close(fig)


def test_a_free_legend_stays_put():
    fig, ax = _diagonal_figure("upper left")
    width = fig.get_figwidth()
    assert plots.place_legends(fig) == []
    assert ax.get_legend()._loc == 2 and fig.get_figwidth() == width  # upper left, same size
    plots.pyplot().close(fig)


def test_bands_and_reference_lines_count_but_shading_does_not():
    plt = plots.pyplot()
    fig, ax = plt.subplots(layout="constrained")
    x = np.linspace(0, 1, 20)
    ax.axvspan(0.0, 1.0, color="C2", alpha=0.1)       # background: may sit under the legend
    ax.plot(x, 0.1 * x, label="low curve")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper right")
    assert not plots.legend_covers_data(ax)
    ax.axhline(0.95, label="reference")                # a reference line through the legend
    ax.legend(loc="upper right")
    assert plots.legend_covers_data(ax)
    ax.lines[-1].remove()
    ax.fill_between(x, 0.5, 1.0, alpha=0.2)            # a filled band under it
    ax.legend(loc="upper right")
    assert plots.legend_covers_data(ax)
    plt.close(fig)


def test_save_figure_applies_the_policy(tmp_path):
    fig, ax = _diagonal_figure("upper right")
    plots.save_figure(fig, str(tmp_path / "f.png"))
    assert covered(fig) == []


@pytest.mark.parametrize(("x", "plain"), [([2.0, 8.0], True), ([2.0, 4096.0], True),
                                          ([1e-8, 5e-8], False)])
def test_short_log_axes_label_minor_ticks_plainly(x, plain):
    """A log axis spanning under a decade gets its minor ticks labelled "2, 3, 4, 6", not
    "2×10⁰, 3×10⁰, …" (``plot rdp --max-order 8`` was crowded); tiny or huge values keep the
    default scientific labels."""
    from privamp.plots import Curve, Panel, plot_panels

    fig = plot_panels([Panel("p", "x", "y", [Curve("c", x, [1.0, 2.0])], xscale="log")])
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].xaxis.get_minorticklabels() if t.get_text()]
    if plain:
        assert all("10^" not in s and "times" not in s for s in labels), labels
        if x[1] < 10:
            assert {"2", "3", "4"} <= set(labels), labels
    else:
        assert all("$" in s or "e" in s for s in labels), labels
    matplotlib.pyplot.close(fig)
