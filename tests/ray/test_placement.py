"""Where partitions go with `placement="spread"`: the plan over the nodes, without Ray."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

import actorgraph as ag
from actorgraph.ray import RayBackend
from actorgraph.ray._placement import fits, plan, refill


def nodes(*cpus: float, **extra: dict[str, float]) -> list[tuple[str, dict[str, float]]]:
    return [(f"n{i}", {"CPU": c, **extra.get(f"n{i}", {})}) for i, c in enumerate(cpus)]


def test_one_partition_a_cpu_each_node_in_turn() -> None:
    assert plan(nodes(1, 1, 1), {}, 3) == ["n0", "n1", "n2"]
    assert plan(nodes(1, 1, 1), {}, 5) == ["n0", "n1", "n2", "n0", "n1"]


def test_nodes_get_partitions_in_proportion_to_their_cpus() -> None:
    assert Counter(plan(nodes(8, 2), {}, 10)) == {"n0": 8, "n1": 2}
    assert plan(nodes(2, 1), {}, 3) == ["n0", "n1", "n0"]  # in turns, not all of n0's first


def test_a_resource_group_goes_only_where_its_resources_are() -> None:
    cluster = nodes(4, 4, 4, n1={"GPU": 2}, n2={"GPU": 1})
    assert Counter(plan(cluster, {"num_gpus": 1}, 3)) == {"n1": 2, "n2": 1}
    assert fits(cluster, {"num_gpus": 1}) == 3
    assert Counter(plan(cluster, {"num_cpus": 2}, 6)) == {"n0": 2, "n1": 2, "n2": 2}


def test_nodes_without_cpus_are_used_only_when_none_has_any() -> None:
    assert plan(nodes(0, 2), {}, 2) == ["n1", "n1"]
    assert plan(nodes(0, 0), {}, 3) == ["n0", "n1", "n0"]
    assert plan([], {}, 2) == []


def test_a_request_of_nothing_fits_everywhere_and_follows_the_cpus() -> None:
    assert fits(nodes(1, 1), {"num_cpus": 0}) == math.inf
    assert Counter(plan(nodes(3, 1), {"num_cpus": 0}, 4)) == {"n0": 3, "n1": 1}


def test_a_partition_whose_node_died_goes_where_the_plan_wants_one_more() -> None:
    assert refill(nodes(1, 1, 1), {}, ["n0", "n1"]) == "n2"
    assert refill(nodes(2, 1), {}, ["n0", "n1"]) == "n0"  # the bigger node's second
    assert refill(nodes(1, 1), {}, ["n0", "n0", "gone"]) == "n1"  # a dead node's partitions count for none
    gpus = nodes(4, 4, n1={"GPU": 1})
    assert refill(gpus, {"num_gpus": 1}, []) == "n1"


@given(st.lists(st.integers(0, 16), min_size=1, max_size=8), st.integers(0, 64))
def test_every_partition_is_placed_and_each_node_gets_at_least_its_share(cpus: list[int], count: int) -> None:
    chosen = Counter(plan(nodes(*cpus), {}, count))
    assert sum(chosen.values()) == count
    total = sum(cpus)
    for i, c in enumerate(cpus):
        if total:
            assert chosen[f"n{i}"] >= math.floor(count * c / total)  # never below its proportional share
            assert c > 0 or chosen[f"n{i}"] == 0
    by_cpus = sorted(zip(cpus, (chosen[f"n{i}"] for i in range(len(cpus))), strict=True))
    assert all(a[1] <= b[1] for a, b in itertools.pairwise(by_cpus) if a[0] < b[0])


@pytest.mark.parametrize("placement", ["spread", "SPREAD", "DEFAULT"])
def test_placement_takes_our_spread_and_rays_own_strategy_names(placement: str) -> None:
    RayBackend(placement=placement).close()


@pytest.mark.parametrize("placement", ["pack", "spread ", "", 3, None])
def test_a_placement_that_is_neither_is_refused_naming_what_to_give(placement: object) -> None:
    with pytest.raises(ag.ConfigError, match=r"placement=.*'spread'.*scheduling strategy"):
        RayBackend(placement=placement)
