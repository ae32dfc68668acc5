"""Plots of the growth curves, written by `python -m benchmarks --plots` into docs/images/.

One PNG per curve, one panel per metric, every series (actorgraph and
LangGraph, or each design) on the same axes, with the median as the point and
the range of the runs as its error bar. Axes are logarithmic where the sizes
or the figures span two decades or more. matplotlib comes with the `bench`
extra and is imported only here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.growth import Curve, Metric

__all__ = ["IMAGES", "plot"]

IMAGES = Path(__file__).resolve().parent.parent / "docs" / "images"
_DECADES = 100  # a span of this ratio or more is drawn on a logarithmic axis
_BESIDE = 4  # more series than this: one panel a line, the legend beside it


def _points(curve: Curve, series: str, metric: Metric) -> list[tuple[int, float, float, float]]:
    """(n, median, below, above) of every figure of `series` that is above 0."""
    points = []
    for n in curve.sizes:
        figure = curve.get(series, metric.name, n)
        if figure is not None and figure.median > 0:
            median = figure.median
            points.append((n, median, median - min(figure.samples), max(figure.samples) - median))
    return points


def _panel(ax: Any, curve: Curve, metric: Metric) -> None:
    values: list[float] = []
    for series in curve.series:
        points = _points(curve, series, metric)
        if not points:
            continue
        xs, ys, below, above = zip(*points, strict=True)
        values += ys
        ax.errorbar(xs, ys, yerr=[below, above], marker="o", markersize=4, capsize=3, label=series)
    decades = max(curve.sizes) / max(min(curve.sizes), 1) >= _DECADES
    if decades:
        ax.set_xscale("log")
    if values and (decades or max(values) / min(values) >= _DECADES):
        ax.set_yscale("log")
    ax.set_xlabel(curve.size if curve.key != "state-size" else "state (bytes)")
    ax.set_ylabel(f"{metric.name} ({metric.unit})", fontsize=8)
    ax.grid(visible=True, which="major", alpha=0.3)
    if len(curve.series) > _BESIDE:
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    else:
        ax.legend(fontsize=7)


def plot(curve: Curve, folder: Path = IMAGES) -> Path:
    """Draw `curve` into `folder`/growth-<key>.png and return the file's path."""
    import matplotlib as mpl

    mpl.use("Agg")
    import matplotlib.pyplot as plt

    metrics = [m for m in curve.metrics if any(_points(curve, s, m) for s in curve.series)]
    beside = len(curve.series) > _BESIDE
    columns = 1 if beside else min(len(metrics), 2)
    lines = -(-len(metrics) // columns)
    width = 8.0 if beside else 4.6 * columns
    figure, axes = plt.subplots(lines, columns, figsize=(width, 3.2 * lines), squeeze=False)
    for ax, metric in zip(axes.flat, metrics, strict=True):
        _panel(ax, curve, metric)
    figure.suptitle(curve.title, fontsize=9)
    figure.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"growth-{curve.key}.png"
    figure.savefig(path, dpi=72, metadata={"Software": None})
    plt.close(figure)
    return path
