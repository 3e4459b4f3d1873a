"""The lines a run of a container's widgets draws, cell for cell, wherever the view is.

A ``LightExchange`` stands in for an exchange's widgets with the lines they
drew, so those lines must be what the screen would show: the same cells,
the same styles. Textual's compositor draws only what is in the viewport;
this draws a run of the transcript's children the way it does, off screen:
each widget placed as its container arranged it (``Widget.arrange``, the
arrangement Textual cached for the last layout), clipped by its containers,
rendered by its own ``render_lines`` and painted over its parent, back to
front; what no widget covers is the container's own background. A test
compares the result with the screen at three sizes.

What it cannot draw the same it refuses (``None``): a widget showing a
scrollbar of its own (the compositor draws those as widgets of their own).
Textual has no public way to render a widget tree off screen; this uses its
public ``arrange`` and ``render_lines`` and one private helper
(``_get_scrollable_region``, the region left inside scrollbars).
"""

from __future__ import annotations

from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

__all__ = ["lines_of", "placed"]


def lines_of(container: Widget, run: list[Widget], marked: type[Widget] = Widget
             ) -> tuple[list[Strip], int, list[Region]] | None:
    """The lines ``run`` (children of ``container``, in order, laid out) draws from the top of its
    first widget to the bottom of its last, their width, and where the widgets of type ``marked``
    in it are drawn, in order (relative to the first line); None: one of them cannot be drawn off
    screen the same (not laid out, or it shows a scrollbar)."""
    content = container.scrollable_content_region
    width = content.width
    placed = {p.widget: p.region + p.offset for p in container.arrange(content.size).placements}
    if not run or any(widget not in placed for widget in run):
        return None
    top = min(placed[widget].y for widget in run)
    bottom = max(placed[widget].bottom for widget in run)
    whole = Region(0, 0, width, bottom - top)
    painted: list[tuple[Widget, Region, Region]] = []
    for widget in run:
        if not _place(widget, placed[widget].translate((0, -top)), whole, painted):
            return None
    background = container.render_lines(Region(0, 0, width, 1))[0]
    lines = [background] * whole.height
    for widget, region, clip in painted:  # parents before their children: the last painted shows
        shown = region.intersection(clip)
        if not shown.area:
            continue
        strips = widget.render_lines(shown.translate((-region.x, -region.y)))
        for y, strip in enumerate(strips, shown.y):
            line = lines[y]
            lines[y] = Strip.join([line.crop(0, shown.x), strip, line.crop(shown.right, width)])
    marks = [region.intersection(clip) for widget, region, clip in painted if isinstance(widget, marked)]
    return lines, width, marks


def placed(widget: Widget) -> Region:
    """Where ``widget`` is among its container's children as the container arranges them now (its
    ``virtual_region``, from the arrangement rather than Textual's map of every widget, which a
    layout that kept the container's size does not rebuild: a widget mounted then has none).
    Empty: not placed."""
    container = widget.parent
    if not isinstance(container, Widget) or not widget.display:
        return Region()
    arrangement = container.arrange(container.scrollable_content_region.size)
    return next((p.region for p in arrangement.placements if p.widget is widget), Region())


def _place(widget: Widget, region: Region, clip: Region, painted: list[tuple[Widget, Region, Region]]) -> bool:
    """``widget`` and what it holds, placed as the compositor places them (``_arrange_root``):
    children at their arranged regions inside their parent's gutter and scroll offset, clipped by it."""
    styles = widget.styles
    if ((widget.show_vertical_scrollbar and styles.scrollbar_size_vertical)
            or (widget.show_horizontal_scrollbar and styles.scrollbar_size_horizontal)):
        return False  # a scrollbar drawn (a code block's has no size: Textual's own CSS)
    painted.append((widget, region, clip))
    if not widget.displayed_children:
        return True
    inside = widget._get_scrollable_region(region.shrink(styles.gutter))
    clip = clip.intersection(inside)
    for placement in widget.arrange(inside.size).placements:
        if not placement.widget.display:
            continue
        child = placement.region + placement.offset + inside.offset - widget.scroll_offset
        if not _place(placement.widget, child, clip, painted):
            return False
    return True
