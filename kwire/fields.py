"""How kwire's classes that are extension types when compiled (kwire/compiled.py, their .pxd files) are
pickled: as a dict of their fields by name, the same bytes whether the class runs from its .py or compiled.
What one build writes the other reads: a Spark cluster's executors run the .py files the job ships them while
the driver runs its compiled modules, and they hand each other Aggregators and all they hold. (Cython's own
way, __pyx_unpickle_<class> with a tuple of fields, exists only in the compiled build, and it reads the
pure build's state wrongly or not at all.)

A class names its fields in __slots__ (a dataclass: in its fields) and says
`__reduce__ = reduce_by_fields` and `__setstate__ = set_fields`. A Python subclass's own fields (its
instance dict) go along.
"""

from __future__ import annotations

import copyreg


def field_names(cls: type) -> tuple[str, ...]:
    """The __slots__ of the nearest class that names them (a Python subclass of kwire's names none), else
    the dataclass fields."""
    for base in cls.__mro__:
        slots = base.__dict__.get("__slots__")
        if slots is not None:
            return (slots,) if isinstance(slots, str) else tuple(slots)
    return tuple(getattr(cls, "__dataclass_fields__", ()))


def fields_state(obj) -> dict:
    """The object's fields by name (and a subclass's instance dict)."""
    state = {name: getattr(obj, name) for name in field_names(type(obj))}
    state.update(getattr(obj, "__dict__", ()))
    return state


def reduce_by_fields(obj):
    """__reduce__: made bare (cls.__new__), then given fields_state (set_fields)."""
    return copyreg.__newobj__, (type(obj),), fields_state(obj)


def set_fields(obj, state: dict) -> None:
    """__setstate__ of fields_state."""
    for name, value in state.items():
        setattr(obj, name, value)


def fields_repr(obj, names: tuple) -> str:
    """__repr__ by the fields `names`, as a dataclass prints."""
    return f"{type(obj).__name__}({', '.join(f'{name}={getattr(obj, name)!r}' for name in names)})"


def fields_equal(obj, other, names: tuple):
    """__eq__ by the fields `names`, as a dataclass compares (NotImplemented for another type)."""
    if type(other) is not type(obj):
        return NotImplemented
    return tuple(getattr(obj, name) for name in names) == tuple(getattr(other, name) for name in names)
