"""``EntryNumbers``: the entries a session knows of (``chat.transcribe``), held as a run from 0 and the
few beyond it, answers ``in`` and ``len`` as the ``set`` it replaced did, whatever order the numbers come
in; and a conversation numbered in order holds no set at all."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.store.numbers import EntryNumbers


@given(st.lists(st.lists(st.integers(-3, 40), max_size=12), max_size=8))
def test_it_answers_as_a_set_does(batches: list[list[int]]) -> None:
    numbers, plain = EntryNumbers(batches[0] if batches else ()), set(batches[0] if batches else ())
    assert len(numbers) == len(plain)
    for batch in batches[1:]:
        if len(batch) == 1:
            numbers.add(batch[0])
        else:
            numbers.update(batch)
        plain.update(batch)
        assert len(numbers) == len(plain)
        assert [n for n in range(-4, 42) if n in numbers] == sorted(plain) == list(numbers)
    assert "3" not in numbers and None not in numbers


def test_numbers_in_order_are_one_run() -> None:
    numbers = EntryNumbers(range(30_000))
    assert len(numbers) == 30_000 and 29_999 in numbers and 30_000 not in numbers
    assert not numbers._rest  # type: ignore[attr-defined]
    numbers.update([30_001, 30_000])  # a gap filled later joins the run
    assert len(numbers) == 30_002 and not numbers._rest  # type: ignore[attr-defined]
