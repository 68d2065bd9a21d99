"""kwire.model: new_exchange, the per-exchange path's maker, makes the Exchange its fields' constructor makes."""

import dataclasses
import pickle

from kwire.model import Exchange, new_exchange


def _values() -> list:
    """A distinct value for each field of Exchange, in order (a field set from the wrong one shows)."""
    return [f"value of {field.name}" if field.name != "extra" else {"from": "extra"}
            for field in dataclasses.fields(Exchange)]


def test_new_exchange_sets_every_field_from_its_own_argument():
    values = _values()
    made = new_exchange(*values)
    assert made == Exchange(*values)
    assert [getattr(made, field.name) for field in dataclasses.fields(Exchange)] == values


def test_new_exchange_keeps_the_extra_dict_it_is_given():
    extra = {}
    made = new_exchange(1, "c", "b", "paired", 7, 0, "Produce", 9, None, 1, 2, None, 10, 20, {}, {}, None, None,
                        None, extra, None)
    made.extra["k"] = 1
    assert extra == {"k": 1}  # the same dict, not a copy: _build hands each exchange a new one
    assert pickle.loads(pickle.dumps(made)) == made
