"""Packing any Gymnasium space into one flat buffer row, and reading rows back.

A `Layout` says where each leaf (Box, Discrete, MultiDiscrete, MultiBinary) of a possibly
nested space lives inside one row. Leaves are laid out depth first in the space's own order:
`Dict` keys in the order of `space.spaces` (Gymnasium's `Dict` sorts the keys of a plain dict
when it is built unless `sort_keys=False`; we never sort again, so pass an `OrderedDict`, a list
of pairs or `sort_keys=False` to choose the order), `Tuple` entries by index.

Keys of an observation `Dict` whose space holds strings (Gymnasium's `Text`, MiniGrid's
`MissionSpace`) are left out of the row: a policy reads numbers, and such envs (every MiniGrid
id) would otherwise be refused. `Layout.space` keeps the full space; `Layout.tree` and
`nativize` have the kept keys only.

Observations keep each leaf's own dtype (Discrete leaves are int64, MultiBinary int8, as in
Gymnasium). Offsets come from an aligned numpy structured dtype, so every leaf starts at a
multiple of its alignment and a row can be reinterpreted in place, numpy or torch. When all
leaves share a dtype the row has that dtype; otherwise it is raw bytes (uint8).

Actions become a row the trainer can sample directly: int32 when every leaf is discrete
(Discrete, MultiDiscrete, MultiBinary; zero-based, Gymnasium's `start` is added back when
the env is stepped) and float32 as soon as one leaf is a Box (discrete leaves then hold their
index as a float).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core.errors import EmulationError

__all__ = [
    "Layout",
    "Leaf",
    "action_layout",
    "assign",
    "is_text_space",
    "map_views",
    "nativize",
    "observation_layout",
    "padded_layouts",
]

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Leaf:
    """One leaf space and its place in a row.

    Attributes:
        path: keys / indices from the root space to this leaf.
        space: the leaf space (Box, Discrete, MultiDiscrete or MultiBinary).
        dtype: dtype of the leaf's values inside the row.
        shape: shape of one leaf value (() for Discrete).
        offset: byte offset of the leaf from the start of the row.
    """

    path: Path
    space: spaces.Space
    dtype: np.dtype
    shape: tuple[int, ...]
    offset: int = 0

    @property
    def size(self) -> int:
        """Number of elements of one leaf value."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def discrete(self) -> bool:
        """True for Discrete, MultiDiscrete and MultiBinary leaves."""
        return not isinstance(self.space, spaces.Box)


@dataclass(frozen=True)
class Layout:
    """Where every leaf of `space` lives in one flat row.

    Attributes:
        space: the original Gymnasium space.
        leaves: the leaves, depth first in the space's own order.
        tree: nested dict / tuple mirroring `space`, with `Leaf` objects at the bottom.
        dtype: the aligned numpy structured dtype of one row (fields named by leaf path).
        row_dtype: dtype of the flat row: the shared leaf dtype, or uint8 for mixed dtypes.
        row_shape: shape of one row: the leaf's own shape for a lone Box observation of one
            or more dimensions, () for a lone Discrete action, else (width,).
    """

    space: spaces.Space
    leaves: tuple[Leaf, ...]
    tree: Any
    dtype: np.dtype
    row_dtype: np.dtype
    row_shape: tuple[int, ...]

    @property
    def single_leaf(self) -> bool:
        """True when the space is one leaf, so the row is that leaf (nothing to nativize)."""
        return isinstance(self.tree, Leaf)

    def sample_to_row(self, sample: Any, row: np.ndarray | None = None) -> np.ndarray:
        """Write one sample of `space` into `row` (allocated if None) and return the row."""
        if row is None:
            row = np.zeros(self.row_shape, self.row_dtype)
        assign(nativize(row, self), sample)
        return row


def _collect(tree: Any) -> list[Leaf]:
    out: list[Leaf] = []
    _map_tree(tree, out.append)
    return out


# Leaf discovery: one small function per space type -------------------------------------------


@functools.singledispatch
def _tree(space: spaces.Space, path: Path, action: bool) -> Any:
    """Nested dict / tuple of `Leaf` (offsets unset) for `space`; refuses unknown spaces."""
    raise EmulationError(
        f"space {space!r} (type {type(space).__name__}) at {_path_name(path)} cannot be emulated; "
        "use Box, Discrete, MultiDiscrete, MultiBinary, or Dict/Tuple of them"
    )


@_tree.register
def _(space: spaces.Box, path: Path, action: bool) -> Any:
    dtype = np.dtype(np.float32) if action else space.dtype
    return Leaf(path, space, dtype, tuple(space.shape))


@_tree.register
def _(space: spaces.Discrete, path: Path, action: bool) -> Any:
    return Leaf(path, space, np.dtype(np.int32) if action else space.dtype, ())


@_tree.register
def _(space: spaces.MultiDiscrete, path: Path, action: bool) -> Any:
    return Leaf(path, space, np.dtype(np.int32) if action else space.dtype, tuple(space.shape))


@_tree.register
def _(space: spaces.MultiBinary, path: Path, action: bool) -> Any:
    return Leaf(path, space, np.dtype(np.int32) if action else space.dtype, tuple(space.shape))


@_tree.register
def _(space: spaces.Dict, path: Path, action: bool) -> Any:
    kept = {key: sub for key, sub in space.spaces.items() if action or not is_text_space(sub)}
    if not kept:
        raise EmulationError(
            f"Dict space at {_path_name(path)} has no leaf that can be emulated (empty, or "
            "text only)"
        )
    return {key: _tree(sub, (*path, key), action) for key, sub in kept.items()}


def is_text_space(space: spaces.Space) -> bool:
    """True for a space of strings: Gymnasium's `Text`, or any space whose samples are `str`
    (MiniGrid's `MissionSpace`). Observation Dicts leave these keys out of their rows."""
    if isinstance(space, spaces.Text):
        return True
    if isinstance(space, spaces.Box | spaces.Discrete | spaces.MultiDiscrete | spaces.MultiBinary):
        return False
    if isinstance(space, spaces.Dict | spaces.Tuple):
        return False
    try:
        return isinstance(space.sample(), str)
    except Exception:  # an unknown space that cannot even sample is refused by `_tree`
        return False


@_tree.register
def _(space: spaces.Tuple, path: Path, action: bool) -> Any:
    if not space.spaces:
        raise EmulationError(f"empty Tuple space at {_path_name(path)} cannot be emulated")
    return tuple(_tree(sub, (*path, index), action) for index, sub in enumerate(space.spaces))


def _path_name(path: Path) -> str:
    return "root" if not path else "".join(f"[{key!r}]" for key in path)


def _field_name(path: Path) -> str:
    # repr keeps names unique even when keys contain the separator.
    return "/".join(repr(key) for key in path) or "value"


def _build(space: spaces.Space, action: bool, row_dtype: np.dtype | None = None) -> Layout:
    """The layout of `space`; a given `row_dtype` forces that row dtype and a 1-D row."""
    unplaced = _collect(_tree(space, (), action))
    for leaf in unplaced:
        if leaf.size == 0:
            raise EmulationError(
                f"leaf {leaf.space!r} at {_path_name(leaf.path)} of {space!r} is empty (size 0) "
                "and cannot be emulated; drop it from the space"
            )
    dtypes = {leaf.dtype for leaf in unplaced}
    if action and (np.dtype(np.float32) in dtypes or row_dtype == np.float32):
        # Mixed discrete + continuous actions share one float32 row.
        unplaced = [
            Leaf(leaf.path, leaf.space, np.dtype(np.float32), leaf.shape) for leaf in unplaced
        ]
        dtypes = {np.dtype(np.float32)}
    struct = np.dtype(
        {
            "names": [_field_name(leaf.path) for leaf in unplaced],
            "formats": [
                (leaf.dtype, leaf.shape) if leaf.shape else leaf.dtype for leaf in unplaced
            ],
        },
        align=True,
    )
    offsets = [struct.fields[name][1] for name in struct.names]
    placed = iter(
        Leaf(leaf.path, leaf.space, leaf.dtype, leaf.shape, offset)
        for leaf, offset in zip(unplaced, offsets, strict=True)
    )
    tree = _map_tree(_tree(space, (), action), lambda leaf: next(placed))
    leaves = _collect(tree)
    if row_dtype is None:
        row_dtype = dtypes.pop() if len(dtypes) == 1 else np.dtype(np.uint8)
        forced = False
    else:
        row_dtype, forced = np.dtype(row_dtype), True
    width = struct.itemsize // row_dtype.itemsize
    if forced:
        row_shape = (width,)
    elif isinstance(tree, Leaf) and not action and isinstance(space, spaces.Box) and space.shape:
        row_shape = tree.shape  # a lone Box observation keeps its shape (images stay images)
    elif isinstance(tree, Leaf) and action and isinstance(space, spaces.Discrete):
        row_shape = ()
    else:
        row_shape = (width,)
    return Layout(space, tuple(leaves), tree, struct, row_dtype, row_shape)


def observation_layout(space: spaces.Space) -> Layout:
    """The row layout of observations from `space` (leaves keep their own dtypes).

    Raises:
        EmulationError: `space` (or a leaf inside it) is not Box, Discrete, MultiDiscrete,
            MultiBinary, Dict or Tuple, or is empty.

    Example:
        >>> from collections import OrderedDict
        >>> space = spaces.Dict(OrderedDict(pos=spaces.Box(0, 1, (2,)), id=spaces.Discrete(3)))
        >>> layout = observation_layout(space)
        >>> layout.row_dtype, layout.row_shape, [leaf.offset for leaf in layout.leaves]
        (dtype('uint8'), (16,), [0, 8])
    """
    return _build(space, action=False)


def action_layout(space: spaces.Space) -> Layout:
    """The row layout of actions for `space`: int32 if all leaves are discrete, else float32.

    Raises:
        EmulationError: as for `observation_layout`.

    Example:
        >>> space = spaces.Tuple((spaces.Discrete(3), spaces.MultiDiscrete([2, 4])))
        >>> layout = action_layout(space)
        >>> layout.row_dtype, layout.row_shape
        (dtype('int32'), (3,))
    """
    return _build(space, action=True)


def padded_layouts(space_list: list[spaces.Space], action: bool) -> tuple[list[Layout], int]:
    """Layouts of several spaces sharing one row dtype, and the common (padded) row width.

    Used for agents with different spaces: every agent's layout addresses a prefix of a row
    `width` elements wide, so one buffer holds them all and `nativize(row, layouts[i])` reads
    agent i's row. Observation rows share the leaves' dtype when all agents have one, else
    bytes; action rows are int32 when every leaf is discrete, else float32. Lone Discrete
    actions keep scalar rows (the common space is then Discrete(max n)).

    Example:
        >>> layouts, width = padded_layouts(
        ...     [spaces.Box(0, 1, (3,)), spaces.Dict(a=spaces.Discrete(2))], action=False
        ... )
        >>> [layout.row_shape for layout in layouts], width, layouts[0].row_dtype
        ([(12,), (8,)], 16, dtype('uint8'))
    """
    layouts = [_build(space, action) for space in space_list]
    if action and all(isinstance(space, spaces.Discrete) for space in space_list):
        return layouts, 0
    dtypes = {layout.row_dtype for layout in layouts}
    if action:
        row_dtype = np.dtype(np.float32 if np.dtype(np.float32) in dtypes else np.int32)
    else:
        row_dtype = dtypes.pop() if len(dtypes) == 1 else np.dtype(np.uint8)
    layouts = [_build(space, action, row_dtype) for space in space_list]
    # Round the row up to the strictest leaf alignment so every row of a buffer stays aligned.
    align = max(layout.dtype.alignment for layout in layouts)
    nbytes = max(layout.dtype.itemsize for layout in layouts)
    nbytes = -(-nbytes // align) * align
    return layouts, nbytes // row_dtype.itemsize


# Nativize: nested zero-copy views of flat rows -------------------------------------------


def nativize(flat: Any, layout: Layout) -> Any:
    """Nested dict / tuple of zero-copy views of `flat`, one per leaf of `layout.space`.

    Args:
        flat: numpy array or torch tensor of shape (*batch, *layout.row_shape) and dtype
            `layout.row_dtype`, contiguous in its last axis (rows of a buffer qualify). A 1-D
            row may be wider than the layout (padded agent rows); the extra is ignored.
        layout: the layout the rows were written with.

    Returns:
        The space's structure (dict in the space's key order, tuple) with, at each leaf, a
        view of shape (*batch, *leaf.shape) and the leaf's dtype. A lone-Box layout returns
        `flat` itself. Writing to a view writes to `flat`.

    Example:
        >>> space = spaces.Tuple((spaces.Discrete(5), spaces.Box(-1, 1, (2,), np.float32)))
        >>> layout = observation_layout(space)
        >>> rows = np.zeros((4, *layout.row_shape), layout.row_dtype)
        >>> discrete, box = nativize(rows, layout)
        >>> discrete.shape, discrete.dtype, box.shape, box.dtype
        ((4,), dtype('int64'), (4, 2), dtype('float32'))
    """
    row_shape = layout.row_shape
    if (
        layout.single_leaf
        and row_shape == layout.tree.shape
        and tuple(flat.shape[len(flat.shape) - len(row_shape) :]) == row_shape
    ):
        return flat
    batch = tuple(flat.shape[: len(flat.shape) - len(layout.row_shape)])
    if isinstance(flat, np.ndarray):
        return _map_tree(layout.tree, lambda leaf: _numpy_view(flat, leaf, layout, batch))
    return _map_tree(layout.tree, lambda leaf: _torch_view(flat, leaf, layout, batch))


def map_views(tree: Any, views: Any, fn: Callable[[Leaf, Any], Any]) -> Any:
    """`fn(leaf, view)` at every leaf of `layout.tree` and its nativized `views`, same nesting."""
    if isinstance(tree, Leaf):
        return fn(tree, views)
    if isinstance(tree, dict):
        return {key: map_views(tree[key], views[key], fn) for key in tree}
    return tuple(map_views(node, view, fn) for node, view in zip(tree, views, strict=True))


def _map_tree(node: Any, fn: Any) -> Any:
    if isinstance(node, Leaf):
        return fn(node)
    if isinstance(node, dict):
        return {key: _map_tree(child, fn) for key, child in node.items()}
    return tuple(_map_tree(child, fn) for child in node)


def _numpy_view(flat: np.ndarray, leaf: Leaf, layout: Layout, batch: tuple) -> np.ndarray:
    if layout.row_dtype == leaf.dtype:
        start = leaf.offset // leaf.dtype.itemsize
        piece = flat[..., start : start + leaf.size]
    else:
        piece = flat[..., leaf.offset : leaf.offset + leaf.size * leaf.dtype.itemsize]
        piece = piece.view(leaf.dtype)
    return piece.reshape((*batch, *leaf.shape))


def _torch_view(flat: Any, leaf: Leaf, layout: Layout, batch: tuple) -> Any:
    if layout.row_dtype == leaf.dtype:
        piece = flat.narrow(-1, leaf.offset // leaf.dtype.itemsize, leaf.size)
    else:
        piece = flat.narrow(-1, leaf.offset, leaf.size * leaf.dtype.itemsize)
        piece = piece.view(_torch_dtype(leaf.dtype))
    # view (not reshape) so a layout that cannot be viewed fails instead of copying.
    return piece.view((*batch, *leaf.shape))


@functools.cache
def _torch_dtype(dtype: np.dtype) -> Any:
    import torch  # optional dependency (extra `torch`); only needed for tensors

    return torch.from_numpy(np.zeros(0, dtype)).dtype


def assign(views: Any, value: Any) -> None:
    """Copy a nested `value` (a sample of the layout's space) into nested `views` in place."""
    if isinstance(views, dict):
        for key, view in views.items():
            assign(view, value[key])
    elif isinstance(views, tuple):
        for view, item in zip(views, value, strict=True):
            assign(view, item)
    else:
        views[...] = value
