"""Layouts: flatten then nativize returns the sample exactly, numpy and torch, zero-copy."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st

from puffer.core import EmulationError, action_layout, nativize, observation_layout
from puffer.core.layout import assign, padded_layouts
from puffer.core.testing import (
    ACTION_CATALOG,
    OBSERVATION_CATALOG,
    SpaceEnv,
    assert_gymnasium_equivalence,
    assert_same_tree,
)

torch = pytest.importorskip("torch")  # the optional extra `torch`; installed in the workspace

DTYPES = [
    np.float32,
    np.float64,
    np.float16,
    np.uint8,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.bool_,
]
shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@st.composite
def boxes(draw: st.DrawFn) -> spaces.Box:
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    low, high = {"f": (-10, 10), "i": (-10, 10), "u": (0, 200), "b": (0, 1)}[dtype.kind]
    return spaces.Box(low, high, draw(shapes), dtype)


leaf_spaces = st.one_of(
    boxes(),
    st.builds(spaces.Discrete, st.integers(1, 9), start=st.integers(-4, 4)),
    st.builds(
        lambda nvec, start: spaces.MultiDiscrete(nvec, start=np.full(len(nvec), start)),
        st.lists(st.integers(1, 6), min_size=1, max_size=4),
        st.integers(-3, 3),
    ),
    st.builds(spaces.MultiBinary, st.one_of(st.integers(1, 6), shapes.filter(bool))),
)
nested_spaces = st.recursive(
    leaf_spaces,
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=4).map(spaces.Tuple),
        st.dictionaries(st.text("abxyz", min_size=1, max_size=3), children, min_size=1, max_size=4)
        # sort_keys=False: the layout must follow whatever order the space holds.
        .map(lambda items: spaces.Dict(items, sort_keys=False)),
    ),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(space=nested_spaces, seed=st.integers(0, 2**16))
def test_flatten_then_nativize_returns_the_sample(space: spaces.Space, seed: int) -> None:
    space.seed(seed)
    layout = observation_layout(space)
    samples = [space.sample() for _ in range(3)]
    rows = np.zeros((3, *layout.row_shape), layout.row_dtype)
    for index, sample in enumerate(samples):
        layout.sample_to_row(sample, rows[index, ...])
    dtypes = {leaf.dtype for leaf in layout.leaves}
    assert layout.row_dtype == (dtypes.pop() if len(dtypes) == 1 else np.uint8)
    for index, sample in enumerate(samples):
        assert_same_tree(nativize(rows[index, ...], layout), sample)
    batch = nativize(torch.from_numpy(rows), layout)
    for index, sample in enumerate(samples):
        assert_same_tree(_index(batch, index), sample)


action_leaves = st.one_of(
    st.builds(spaces.Discrete, st.integers(1, 9), start=st.integers(-4, 4)),
    st.builds(spaces.MultiDiscrete, st.lists(st.integers(1, 6), min_size=1, max_size=3)),
    st.builds(spaces.MultiBinary, st.integers(1, 4)),
    st.builds(
        lambda shape, dtype: spaces.Box(-2, 2, shape, dtype),
        shapes,
        st.sampled_from([np.float32, np.float64]),
    ),
)
action_spaces = st.recursive(
    action_leaves,
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3).map(spaces.Tuple),
        st.dictionaries(
            st.text("abxyz", min_size=1, max_size=3), children, min_size=1, max_size=3
        ).map(lambda items: spaces.Dict(items, sort_keys=False)),
    ),
    max_leaves=5,
)


@settings(max_examples=100, deadline=None)
@given(obs_space=nested_spaces, act_space=action_spaces, seed=st.integers(0, 2**16))
def test_emulated_env_over_random_spaces_matches_the_raw_env(
    obs_space: spaces.Space, act_space: spaces.Space, seed: int
) -> None:
    assert_gymnasium_equivalence(lambda: SpaceEnv(obs_space, act_space), steps=40, seed=seed)


def _index(tree: object, index: int) -> object:
    if isinstance(tree, dict):
        return {key: _index(value, index) for key, value in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_index(value, index) for value in tree)
    return tree[index].numpy()


@pytest.mark.parametrize("name", list(OBSERVATION_CATALOG))
def test_nativize_is_zero_copy(name: str) -> None:
    layout = observation_layout(OBSERVATION_CATALOG[name])
    rows = np.zeros((2, *layout.row_shape), layout.row_dtype)
    tensor = torch.from_numpy(rows)
    start, end = tensor.data_ptr(), tensor.data_ptr() + rows.nbytes
    for leaf_view in _leaves(nativize(rows, layout)):
        assert np.shares_memory(leaf_view, rows)
    for leaf_view in _leaves(nativize(tensor, layout)):
        assert start <= leaf_view.data_ptr() < end
        leaf_view.fill_(1)  # writes through to the numpy rows
    assert rows.any()


def _leaves(tree: object) -> list:
    if isinstance(tree, dict):
        return [leaf for value in tree.values() for leaf in _leaves(value)]
    if isinstance(tree, tuple):
        return [leaf for value in tree for leaf in _leaves(value)]
    return [tree]


def test_dict_leaves_follow_the_space_key_order() -> None:
    # The catalog's nested Dict lists zeta before alpha before mid; so does the row.
    layout = observation_layout(OBSERVATION_CATALOG["nested"])
    assert [leaf.path[0] for leaf in layout.leaves] == ["zeta"] + ["alpha"] * 4 + ["mid"]
    offsets = [leaf.offset for leaf in layout.leaves]
    assert offsets == sorted(offsets)
    assert list(nativize(np.zeros(layout.row_shape, np.uint8), layout)) == ["zeta", "alpha", "mid"]
    # A plain dict given to spaces.Dict is sorted by Gymnasium itself; we keep that order.
    plain = observation_layout(spaces.Dict({"b": spaces.Discrete(2), "a": spaces.Discrete(3)}))
    assert [leaf.path for leaf in plain.leaves] == [("a",), ("b",)]
    kept = spaces.Dict({"b": spaces.Discrete(2), "a": spaces.Discrete(3)}, sort_keys=False)
    assert [leaf.path for leaf in observation_layout(kept).leaves] == [("b",), ("a",)]


def test_offsets_are_aligned() -> None:
    space = spaces.Tuple(
        (spaces.MultiBinary(3), spaces.Box(0, 1, (), np.float64), spaces.Discrete(2))
    )
    layout = observation_layout(space)
    assert [leaf.offset for leaf in layout.leaves] == [0, 8, 16]
    assert layout.row_shape == (24,) and layout.row_dtype == np.uint8
    assert layout.dtype.isalignedstruct


def test_lone_leaves_keep_their_rows() -> None:
    image = observation_layout(OBSERVATION_CATALOG["image"])
    assert image.row_shape == (8, 8, 3) and image.row_dtype == np.uint8
    assert observation_layout(spaces.Discrete(4)).row_shape == (1,)
    assert action_layout(spaces.Discrete(4)).row_shape == ()


@pytest.mark.parametrize(
    ("name", "row_dtype", "row_shape"),
    [
        ("discrete", np.int32, ()),
        ("multidiscrete", np.int32, (3,)),
        ("multibinary", np.int32, (4,)),
        ("box-2d-float64", np.float32, (4,)),
        ("dict-discrete", np.int32, (3,)),
        ("dict-mixed", np.float32, (6,)),
    ],
)
def test_action_rows(name: str, row_dtype: type, row_shape: tuple) -> None:
    layout = action_layout(ACTION_CATALOG[name])
    assert layout.row_dtype == row_dtype and layout.row_shape == row_shape


def test_padded_layouts_share_a_row() -> None:
    layouts, width = padded_layouts(
        [OBSERVATION_CATALOG["box"], OBSERVATION_CATALOG["nested"]], action=False
    )
    assert all(layout.row_dtype == np.uint8 for layout in layouts)
    assert width == max(layout.dtype.itemsize for layout in layouts)
    rows = np.zeros((2, width), np.uint8)
    sample = OBSERVATION_CATALOG["nested"].sample()
    assign(nativize(rows[1], layouts[1]), sample)
    assert_same_tree(nativize(rows[1], layouts[1]), sample)


@pytest.mark.parametrize(
    "space",
    [
        spaces.Text(5),
        spaces.Dict(OrderedDict(ok=spaces.Discrete(2), bad=spaces.Sequence(spaces.Discrete(2)))),
        spaces.Tuple(()),
        spaces.Box(0, 1, (0,)),
    ],
    ids=["text", "sequence-in-dict", "empty-tuple", "empty-box"],
)
def test_unsupported_spaces_are_refused(space: spaces.Space) -> None:
    with pytest.raises(EmulationError, match="cannot be emulated"):
        observation_layout(space)


def test_string_keys_of_observation_dicts_are_left_out() -> None:
    space = spaces.Dict(OrderedDict(mission=spaces.Text(20), pos=spaces.Box(0, 1, (2,))))
    layout = observation_layout(space)
    assert list(layout.tree) == ["pos"] and layout.row_shape == (2,)
    row = layout.sample_to_row(space.sample())
    assert row.dtype == np.float32
    with pytest.raises(EmulationError, match=r"no leaf that can be emulated \(empty, or text"):
        observation_layout(spaces.Dict(mission=spaces.Text(5)))
    with pytest.raises(EmulationError, match="cannot be emulated"):
        action_layout(space)  # an action is never left out
