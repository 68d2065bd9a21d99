"""kwire.native.mergeable: a Capped table trims to exactly what sorting the plain dict keeps, however
keys come (one at a time, in bursts, across a pickle), and Kept keeps what a sort keeps."""

from __future__ import annotations

import pickle
import random

import pytest

from kwire.native.mergeable import Capped, Kept, capped_get, keep_smallest, stable_hash, stable_hash3


def _key(rng: random.Random, shape: str):
    """Keys of the shapes the analysis uses (the heap ranks ints and tuples that start with one by
    that int), and a mix the heap must notice."""
    n = rng.randint(0, 500)
    if shape == "int":
        return n
    if shape == "str first" or (shape == "mixed" and rng.random() < 0.05):
        return (n + 0.5, rng.choice("abc"))  # not an int first: ranked by the key alone
    return (n, rng.choice("abc"))


@pytest.mark.parametrize("shape", ["int first", "int", "str first", "mixed"])
@pytest.mark.parametrize("seed", range(20))
def test_capped_trims_as_a_sort_does(seed, shape):
    rng = random.Random(seed)
    limit = rng.choice([1, 3, 16, 100])
    capped, plain = Capped(), {}
    for step in range(3000):
        burst = 1 if rng.random() < 0.8 else rng.randint(2, 3 * limit)
        for _ in range(burst):
            key = _key(rng, shape)
            capped[key] = plain[key] = step  # new keys and keys seen before, kept or trimmed
        if rng.random() < 0.9:
            keep_smallest(capped, limit)
            keep_smallest(plain, limit)
            assert list(sorted(capped.items())) == list(sorted(plain.items()))
        if rng.random() < 0.01:
            capped = pickle.loads(pickle.dumps(capped))
            assert type(capped) is Capped
    keep_smallest(capped, limit)
    keep_smallest(plain, limit)
    assert sorted(capped.items()) == sorted(plain.items()) and len(capped) == min(limit, len(plain))


@pytest.mark.parametrize("seed", range(10))
def test_a_key_capped_refuses_is_one_keep_smallest_would_drop_at_once(seed):
    rng = random.Random(seed)
    limit = rng.choice([1, 3, 16, 100])
    capped, plain = Capped(), {}
    refused = 0
    shape = ("int first", "int", "str first", "mixed")[seed % 4]
    for step in range(3000):
        key = _key(rng, shape)
        if key not in capped and capped.refuses(key, limit):
            refused += 1
            plain[key] = step
            keep_smallest(plain, limit)
            assert key not in plain  # dropped at once: skipping it changed nothing
        else:
            capped[key] = plain[key] = step
            keep_smallest(capped, limit)
            keep_smallest(plain, limit)
        assert sorted(capped.items()) == sorted(plain.items())
        if rng.random() < 0.01:
            capped = pickle.loads(pickle.dumps(capped))  # no heap: refuses nothing until trimmed again
            assert not capped.refuses(key, limit)
    assert refused > 0


def test_capped_is_a_plain_dict_to_its_readers():
    table = Capped()
    table.setdefault("b", []).append(1)
    table["a"] = [2]
    assert table == {"a": [2], "b": [1]} and list(table) == ["b", "a"]
    keep_smallest(table, 1)
    assert table == {"a": [2]}


@pytest.mark.parametrize("seed", range(5))
def test_kept_keeps_what_a_sort_keeps(seed):
    rng = random.Random(seed)
    kept, everything = Kept(7), []
    for n in range(500):
        key = (rng.randint(0, 100), n)
        kept.add(key, n)
        everything.append((key, n))
    assert kept.items == sorted(everything)[:7]


@pytest.mark.parametrize("seed", range(5))
def test_stable_hash3_is_stable_hash(seed):
    rng = random.Random(seed)
    topics = ["kwire-many-small", "", "t'\"", "é\ud800x", "\\n"]
    for _ in range(2000):
        a = rng.choice(topics + [None, 3])
        b = rng.choice([0, 1, -1, 2**40, None, True, "0"])
        c = rng.choice([("crc", rng.getrandbits(32), -1, -1), ("pid", rng.randint(-1, 9), 0, rng.getrandbits(31)), None,
                        ("pid", True, -1, -1), ("crc", 1, 2), ("crc", 1, 2, 3, 4), ("crd", 1, 2, 3), ["crc", 1, 2, 3],
                        ("crc", -2**63, "1", 3), ("pid", 2**70, -(2**40), 0)])
        assert stable_hash3(a, b, c) == stable_hash(a, b, c)


@pytest.mark.parametrize("kind", ["crc", "pid"])
def test_stable_hash3_of_batch_keys_at_the_ends_of_64_bits(kind):
    """A batch key's numbers written and CRC'd in C (compiled) or by zlib (pure): every width of number,
    both signs, and the ends of 64 bits."""
    rng = random.Random(kind)
    ends = [0, 1, -1, 9, 10, -10, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**31, -(2**31), 10**18, -(10**19)]
    numbers = ends + [rng.randint(-(10 ** rng.randint(0, 19)), 10 ** rng.randint(0, 19)) for _ in range(300)]
    for x in numbers:
        for y, z in ((rng.choice(numbers), rng.choice(numbers)), (x, -x), (0, x)):
            for topic, partition in (("kwire-many-small", 0), ("", 2**31 - 1), ("é", -1)):
                key = (kind, x, y, z)
                assert stable_hash3(topic, partition, key) == stable_hash(topic, partition, key), key


def test_capped_get_is_get():
    """capped_get: compiled, dict's look-up as a C call; the same answers as .get, and the same error."""
    table = Capped()
    for i in range(50):
        table[(i, "t", ("pid", i, 0, -1))] = i
    for i in range(60):
        key = (i, "t", ("pid", i, 0, -1))
        assert capped_get(table, key) == table.get(key)
    assert capped_get(table, "absent") is None
    with pytest.raises(TypeError):
        capped_get(table, ["unhashable"])
    with pytest.raises(TypeError):
        table.get(["unhashable"])
