"""How an explanation (:meth:`Runner.explain_answer <v22sdk.engine.runner.Runner.explain_answer>`) is shown:
a terminal view (rich) and a picture (matplotlib, the optional ``plot`` extra).

The picture has two panels: on the left the input where people would rather look (an image
with a heatmap over its cells, a sound's waveform and spectrogram with each segment or stretch
shaded, a text with each character shaded), on the right a bar chart of the top named slots.
Red supports the answer (positive attribution), blue works against it. No torch here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

#: size of the picture in inches at :data:`PLOT_DPI`: 1100 × 440 pixels
PLOT_SIZE = (11.0, 4.4)
PLOT_DPI = 100
#: font families tried for characters DejaVu Sans lacks (CJK); the first one installed is used
CJK_FAMILIES = (
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK SC",
    "Noto Sans CJK JP",
    "Source Han Sans SC",
    "Droid Sans Fallback",
    "AR PL UMing CN",
)


# -- terminal ---------------------------------------------------------------------------------------
def _bar(value: float, scale: float, width: int = 16) -> str:
    n = 0 if scale <= 0 else min(width, round(abs(value) / scale * width))
    return ("█" * n) or ("▏" if value else "")


def _style(value: float) -> str:
    return "red" if value > 0 else ("blue" if value < 0 else "")


def render(expl: dict[str, Any], top: int = 10):
    """A rich renderable of ``expl``: the answer and method, the top slots with signed bars, the
    tokens (characters shaded for a text) and, when computed, the regions as a grid of numbers."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[Any] = []
    method = expl["method"]
    head = Text.assemble(
        ("why ", "bold"),
        (repr(expl["decoded"]), "bold"),
        f"  log-probability {expl['log_prob']:.4g}, {method['name']}"
        + (f" ({method['steps']} intervals)" if method.get("steps") else ""),
    )
    parts.append(head)
    if expl.get("familiar") is False:
        parts.append(
            Text(
                "  the input is unfamiliar to the checkpoint: run withholds this answer; explained is the "
                "answer the engine decoded",
                style="yellow",
            )
        )
    slots = expl["slots"][:top]
    if slots:
        scale = max(abs(s["attribution"]) for s in slots)
        table = Table(box=None, pad_edge=False, show_edge=False, title_justify="left")
        columns: tuple[tuple[str, Literal["left", "right"]], ...] = (
            ("named slot", "left"),
            ("value", "right"),
            ("attribution", "right"),
            ("", "left"),
        )
        for col, justify in columns:
            table.add_column(col, justify=justify)
        for s in slots:
            table.add_row(
                s["name"],
                f"{s['value']:+.3f}",
                f"{s['attribution']:+.4g}",
                Text(_bar(s["attribution"], scale), style=_style(s["attribution"])),
            )
        parts.append(table)
        left = len(expl["slots"]) - len(slots)
        if left:
            parts.append(Text(f"  … and {left} more active slot(s) (--json lists all)", style="dim"))
    comp = (expl.get("completeness") or {}).get("slots")
    if comp:
        parts.append(
            Text(
                f"  slots sum {comp['sum']:+.4g} = f(input) − f(no attributes) "
                f"{comp['f_input'] - comp['f_baseline']:+.4g}, gap {comp['gap']:+.2g}",
                style="dim",
            )
        )
    parts.append(Text("  " + meaning(expl), style="dim"))
    parts.append(_tokens_view(expl))
    if expl.get("regions"):
        parts.append(_regions_view(expl["regions"]))
    elif expl.get("regions_note"):
        parts.append(Text("  " + expl["regions_note"], style="dim"))
    return Group(*parts)


def meaning(expl: dict[str, Any]) -> str:
    """What the numbers are, in one line."""
    if expl["method"]["key"] == "occlusion":
        return (
            "attribution = log-probability of the answer lost when that part alone is removed "
            "(tiny when the rest of the input still carries the answer; the ranking is what was tested)"
        )
    return "attribution = share of the log-probability gained from the empty input (they add up)"


def _tokens_view(expl: dict[str, Any]):
    from rich.console import Group
    from rich.text import Text

    tokens = expl["tokens"]
    scale = max((abs(t["attribution"]) for t in tokens), default=0.0)
    chars = [t.get("char") for t in tokens]
    lines: list[Any] = [
        Text(
            f"tokens ({expl['tokens_read']} read"
            + (f" of {expl['tokens_total']}" if expl["tokens_total"] != expl["tokens_read"] else "")
            + ")",
            style="bold",
        )
    ]
    if all(c is not None for c in chars) and tokens:  # a text: the characters shaded
        shaded = Text("  ")
        for t in tokens:
            shaded.append(t["char"], style=_shade(t["attribution"], scale))
        lines.append(shaded)
    shown = sorted(tokens, key=lambda t: -abs(t["attribution"]))[:12]
    for t in sorted(shown, key=lambda t: t["token"]):
        lines.append(
            Text.assemble(
                f"  {t['at']:<22} {t['attribution']:+10.4g} ", (_bar(t["attribution"], scale), _style(t["attribution"]))
            )
        )
    if len(tokens) > len(shown):
        lines.append(Text(f"  … the {len(shown)} strongest of {len(tokens)} tokens shown", style="dim"))
    return Group(*lines)


def _shade(value: float, scale: float) -> str:
    if scale <= 0 or value == 0:
        return ""
    level = min(1.0, abs(value) / scale)
    strength = int(255 - 190 * level)
    colour = f"rgb(255,{strength},{strength})" if value > 0 else f"rgb({strength},{strength},255)"
    return f"black on {colour}"


def _regions_view(regions: dict[str, Any]):
    from rich.console import Group
    from rich.text import Text

    cells = regions["cells"]
    scale = max((abs(c["attribution"]) for c in cells), default=0.0)
    lines: list[Any] = [Text(f"regions ({regions['method']}; removed = {regions['fill']})", style="bold")]
    if regions["kind"] == "image":
        xs = sorted({c["box"][0] for c in cells})
        ys = sorted({c["box"][1] for c in cells})
        at = {(c["box"][1], c["box"][0]): c["attribution"] for c in cells}
        for y in ys:
            row = Text("  ")
            for x in xs:
                v = at[(y, x)]
                row.append(f"{v:+7.2f}", style=_shade(v, scale))
                row.append(" ")
            lines.append(row)
    else:
        for c in cells:
            t0, t1 = c["time"]
            lines.append(
                Text.assemble(
                    f"  {t0:6.2f}-{t1:.2f} s {c['attribution']:+10.4g} ",
                    (_bar(c["attribution"], scale), _style(c["attribution"])),
                )
            )
    return Group(*lines)


def print_explanation(expl: dict[str, Any], top: int = 10) -> None:
    """Print :func:`render` to stdout (colours only on a terminal)."""
    from rich.console import Console

    Console(soft_wrap=True).print(render(expl, top))


# -- picture ----------------------------------------------------------------------------------------
def write_plot(
    expl: dict[str, Any], path: str | Path, *, data: Any = None, units: dict | None = None, top: int = 12
) -> Path:
    """Draw ``expl`` to ``path`` (PNG, PDF or SVG from the suffix), :data:`PLOT_SIZE` at :data:`PLOT_DPI`.

    ``data``: the decoded input (``modality.load(path).data``) for an image or a sound; ``units``
    its units (``sample_rate``). Without it an image or a sound is drawn as its token boxes or
    time spans only. Written through :func:`v22sdk._io.atomic_output`.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .._io import atomic_output

    fig = plt.figure(figsize=PLOT_SIZE, dpi=PLOT_DPI)
    grid = fig.add_gridspec(2, 2, width_ratios=(1.25, 1.0), height_ratios=(1.0, 1.0))
    try:
        _draw_input(fig, grid, expl, data, units or {})
        _draw_slots(fig.add_subplot(grid[:, 1]), expl, top)
        unfamiliar = " (unfamiliar input: answer withheld by run)" if expl.get("familiar") is False else ""
        fig.suptitle(
            f"why {expl['decoded']!r}{unfamiliar}: {expl['method']['name']}, log-probability {expl['log_prob']:.3g}",
            fontsize=10,
            fontproperties=_font_for(expl["decoded"]),
        )
        fig.subplots_adjust(left=0.06, right=0.97, top=0.88, bottom=0.12, wspace=0.75, hspace=0.45)
        fmt = Path(path).suffix.lower().lstrip(".") or "png"
        with atomic_output(path, "wb") as fh:
            fig.savefig(fh, dpi=PLOT_DPI, format=fmt)
    finally:
        plt.close(fig)
    return Path(path)


def _norm(values: Sequence[float]):
    from matplotlib.colors import TwoSlopeNorm

    m = max((abs(v) for v in values), default=0.0) or 1.0
    return TwoSlopeNorm(vcenter=0.0, vmin=-m, vmax=m)


def _draw_slots(ax, expl: dict[str, Any], top: int) -> None:
    slots = expl["slots"][:top][::-1]
    if not slots:
        ax.text(0.5, 0.5, "no active slot", ha="center", va="center")
        ax.set_axis_off()
        return
    vals = [s["attribution"] for s in slots]
    ax.barh(range(len(slots)), vals, color=["#d6604d" if v > 0 else "#4393c3" for v in vals])
    ax.set_yticks(range(len(slots)))
    ax.set_yticklabels([f"{s['name']} = {s['value']:+.2f}" for s in slots], fontsize=7)
    ax.axvline(0, color="0.3", lw=0.8)
    ax.set_xlabel(
        "log-probability lost without it alone (nats)"
        if expl["method"]["key"] == "occlusion"
        else "attribution (nats; they add up)",
        fontsize=8,
    )
    ax.set_title(f"top named slots ({len(expl['slots'])} active)", fontsize=9)
    ax.tick_params(axis="x", labelsize=7)


def _draw_input(fig, grid, expl: dict[str, Any], data, units: dict) -> None:
    regions = expl.get("regions")
    tokens = expl["tokens"]
    if regions and regions["kind"] == "image" or (tokens and "box" in tokens[0]):
        _draw_image(fig.add_subplot(grid[:, 0]), expl, data)
    elif regions and regions["kind"] == "sound" or (tokens and "time" in tokens[0]):
        _draw_sound(fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[1, 0]), expl, data, units)
    elif tokens and "char" in tokens[0]:
        _draw_text(fig.add_subplot(grid[:, 0]), expl)
    else:
        ax = fig.add_subplot(grid[:, 0])
        vals = [t["attribution"] for t in tokens]
        ax.bar(range(len(vals)), vals, color=["#d6604d" if v > 0 else "#4393c3" for v in vals])
        ax.set_xlabel("token")
        ax.set_title("attribution per token", fontsize=9)


def _draw_image(ax, expl: dict[str, Any], data) -> None:
    import numpy as np

    regions = expl.get("regions")
    cells = (
        regions["cells"]
        if regions
        else [{"box": t["box"], "attribution": t["attribution"]} for t in expl["tokens"] if t.get("box")]
    )
    if regions is None and len(cells) > 1:  # a global token plus patch tokens: show the patches
        whole = max(c["box"][2] * c["box"][3] for c in cells)
        cells = [c for c in cells if c["box"][2] * c["box"][3] < whole] or cells
    width = max(c["box"][2] for c in cells)
    height = max(c["box"][3] for c in cells)
    if data is not None:
        img = np.asarray(data)
        if img.dtype.kind in "ui":
            img = img / float(np.iinfo(img.dtype).max)
        img = img.astype(np.float64)
        ax.imshow(
            img if img.ndim == 3 else img,
            cmap="gray" if img.ndim == 2 else None,
            extent=(0, width, height, 0),
            interpolation="nearest",
        )
    heat = np.full((height, width), np.nan)
    for c in cells:
        x0, y0, x1, y1 = c["box"]
        heat[y0:y1, x0:x1] = c["attribution"]
    im = ax.imshow(
        heat,
        cmap="RdBu_r",
        norm=_norm([c["attribution"] for c in cells]),
        alpha=0.55,
        extent=(0, width, height, 0),
        interpolation="nearest",
    )
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.03).ax.tick_params(labelsize=7)
    how = f"{regions['method']}, {len(cells)} cells" if regions else f"{len(cells)} patch token(s)"
    ax.set_title(f"image: attribution per cell ({how})", fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def _draw_sound(ax_wave, ax_spec, expl: dict[str, Any], data, units: dict) -> None:
    import numpy as np

    regions = expl.get("regions")
    spans = (
        [(c["time"], c["attribution"]) for c in regions["cells"]]
        if regions
        else [(t["time"], t["attribution"]) for t in expl["tokens"] if t.get("time")]
    )
    import matplotlib

    norm = _norm([a for _, a in spans])
    cmap = matplotlib.colormaps["RdBu_r"]
    rate = units.get("sample_rate")
    end = max(t[1] for t, _ in spans)
    if data is not None and rate:
        x = np.asarray(data, dtype=np.float64)
        x = x.mean(1) if x.ndim == 2 else x
        ax_wave.plot(np.arange(len(x)) / rate, x, color="0.2", lw=0.5)
        with np.errstate(divide="ignore"):  # digital silence: -inf dB, drawn as the colour map's floor
            ax_spec.specgram(x, Fs=rate, NFFT=512, noverlap=384, cmap="magma")
        end = len(x) / rate
    for (t0, t1), a in spans:
        ax_wave.axvspan(t0, t1, color=cmap(norm(a)), alpha=0.5, lw=0)
        ax_spec.axvspan(t0, t1, ymin=0, ymax=0.06, color=cmap(norm(a)), lw=0)
    for t in expl["tokens"]:  # segment boundaries of the engine's tokens
        if t.get("time"):
            ax_wave.axvline(t["time"][0], color="0.4", lw=0.6, ls=":")
    ax_wave.set_xlim(0, end)
    ax_spec.set_xlim(0, end)
    what = f"{regions['method']}, {len(spans)} stretches" if regions else f"{len(spans)} segment token(s)"
    ax_wave.set_title(f"sound: attribution per stretch ({what})", fontsize=9)
    ax_wave.tick_params(labelsize=7)
    ax_spec.tick_params(labelsize=7)
    ax_spec.set_xlabel("seconds", fontsize=8)
    ax_spec.set_ylabel("Hz", fontsize=8)
    sm = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
    ax_wave.figure.colorbar(sm, ax=ax_wave, fraction=0.046, pad=0.03).ax.tick_params(labelsize=7)


def _draw_text(ax, expl: dict[str, Any], per_line: int = 20) -> None:
    import matplotlib

    tokens = expl["tokens"]
    norm = _norm([t["attribution"] for t in tokens])
    cmap = matplotlib.colormaps["RdBu_r"]
    font = _font_for("".join(t.get("char") or "" for t in tokens))
    rows = max(1, -(-len(tokens) // per_line))
    for i, t in enumerate(tokens):
        r, c = divmod(i, per_line)
        level = abs(norm(t["attribution"]) - 0.5) * 2  # 0 at no attribution, 1 at the strongest
        ax.text(
            c + 0.5,
            -r,
            t.get("char") or "?",
            ha="center",
            va="center",
            fontsize=13,
            fontproperties=font,
            color="white" if level > 0.6 else "black",
            bbox={"boxstyle": "square,pad=0.25", "fc": cmap(norm(t["attribution"])), "ec": "0.8", "lw": 0.5},
        )
    ax.set_xlim(0, per_line)
    ax.set_ylim(-max(rows, 6) + 0.5, 0.8)
    ax.set_axis_off()
    sm = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
    ax.figure.colorbar(sm, ax=ax, fraction=0.046, pad=0.03, orientation="horizontal").ax.tick_params(labelsize=7)
    ax.set_title("text: attribution per character", fontsize=9)


def _font_for(text: str):
    """FontProperties of an installed CJK font when ``text`` needs one (None: matplotlib's default)."""
    if all(ord(ch) < 0x2E80 for ch in text):
        return None
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist}
    for family in CJK_FAMILIES:
        if family in names:
            return font_manager.FontProperties(family=family)
    # fonts installed after matplotlib built its cache: find them by file name, once
    for path in font_manager.findSystemFonts():
        low = Path(path).name.lower()
        if any(key in low for key in ("wqy", "notosanscjk", "sourcehansans", "droidsansfallback", "uming")):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):
                continue
            return font_manager.FontProperties(fname=path)
    return None
