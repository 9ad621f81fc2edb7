"""The Core's Events are lazy (issue 27, items 2-3): made over their signed bytes, validated on
first use, and then indistinguishable from :meth:`Event.from_signed_bytes`'s eager Events.

Every operation below starts from a *fresh* lazy Event, so that it is the first use and must
materialize by itself; its answer is compared with the same operation on the eager Event of the
same bytes. The laziness itself is observed by counting ``Event.model_validate_json`` calls."""

from __future__ import annotations

import asyncio
import copy
import pickle
import threading
from typing import Any, Callable, Coroutine, Dict, List, TypeVar

import pytest
from pydantic import BaseModel, ValidationError

from core_support import GROUP, create, make_core
from test_core_flow import mission_to_approval
from missionweaveprotocol.models import Event, EventKind

T = TypeVar("T")
_INSTANCE_DICT: Any = BaseModel.__dict__["__dict__"]


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


def is_materialized(event: Event) -> bool:
    """Whether the Event's fields are in its instance dictionary (read past its property)."""
    return bool(_INSTANCE_DICT.__get__(event))


@pytest.fixture(scope="module")
def signed() -> List[bytes]:
    """The signed bytes of a whole Mission's log (ten Event kinds, nested payloads)."""
    async def main() -> List[bytes]:
        core = make_core()
        await mission_to_approval(core)
        return [event.signed_bytes for event in await core.replay(GROUP)]
    return run(main())


def lazy(raw: bytes) -> Event:
    return Event._over_signed_bytes(raw)


class Holder(BaseModel):
    events: List[Event]


def outcome(operation: Callable[[Event], Any], event: Event) -> Any:
    """The operation's answer, or the type and text of what it raised."""
    try:
        return operation(event)
    except Exception as error:  # noqa: BLE001 - the error itself is the answer compared
        return type(error), str(error)


OPERATIONS: Dict[str, Callable[[Event], Any]] = {
    "attribute": lambda e: (e.id, e.kind, e.sequence, e.payload, e.occurred_at, e.signature),
    "property": lambda e: (e.action_id, e.signed_bytes),
    "model_dump": lambda e: e.model_dump(),
    "model_dump_json_by_alias": lambda e: e.model_dump_json(by_alias=True, exclude_none=True),
    "model_dump_json_mode": lambda e: e.model_dump(mode="json"),
    "repr": repr,
    "str": str,
    "hash": hash,  # a TypeError on both (the payload is a dict), as on the eager Event
    "fields_set": lambda e: e.model_fields_set,
    "vars": lambda e: dict(vars(e)),
    "iter": lambda e: list(e),
    "copy": lambda e: copy.copy(e).model_dump(),
    "deepcopy": lambda e: copy.deepcopy(e).model_dump(),
    "pickle": lambda e: pickle.loads(pickle.dumps(e)).model_dump(),
    "model_copy_update": lambda e: e.model_copy(update={"sequence": 99}).model_dump(),
    "nested_in_a_model": lambda e: Holder(events=[e]).model_dump_json(),
    "equal_to_eager": lambda e: e == Event.from_signed_bytes(e.signed_bytes),
    "isinstance": lambda e: (isinstance(e, Event), type(e) is Event),
}


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_first_use_answers_as_the_eager_event(signed: List[bytes], name: str) -> None:
    operation = OPERATIONS[name]
    for raw in signed:
        event = lazy(raw)
        assert not is_materialized(event)
        assert outcome(operation, event) == outcome(operation, Event.from_signed_bytes(raw))
        assert event == Event.from_signed_bytes(raw)


def test_signed_bytes_are_the_given_object_and_never_parse(signed: List[bytes],
                                                           monkeypatch: Any) -> None:
    calls: List[bytes] = []
    original = Event.model_validate_json.__func__  # type: ignore[attr-defined]

    def counted(cls: Any, raw: Any, **kw: Any) -> Any:
        calls.append(raw)
        return original(cls, raw, **kw)

    monkeypatch.setattr(Event, "model_validate_json", classmethod(counted))
    events = [lazy(raw) for raw in signed]
    assert all(e.signed_bytes is raw for e, raw in zip(events, signed))
    assert calls == []
    assert events[0].kind == EventKind.MISSION_CREATED
    assert calls == [signed[0]]
    events[0].model_dump()
    assert events[0].payload is events[0].payload and len(calls) == 1  # validated once


def test_core_perform_and_replay_return_lazy_events(monkeypatch: Any) -> None:
    calls: List[int] = []
    original = Event.model_validate_json.__func__  # type: ignore[attr-defined]

    def counted(cls: Any, raw: Any, **kw: Any) -> Any:
        calls.append(1)
        return original(cls, raw, **kw)

    async def main() -> None:
        # Checked inside the coroutine: ``asyncio.run`` reprs its main task's result on the
        # way out (``signal.getsignal`` formatting the SIGINT handler that holds the task),
        # which would materialize any Event returned from here.
        core = make_core()
        monkeypatch.setattr(Event, "model_validate_json", classmethod(counted))
        performed = await core.perform(create())
        replayed = await core.replay(GROUP)
        assert calls == [] and not is_materialized(performed)
        assert [e.signed_bytes for e in replayed] == [performed.signed_bytes]
        assert performed.kind == EventKind.MISSION_CREATED and len(calls) == 1
        assert replayed[0] == performed and len(calls) == 2

    run(main())


def test_a_lazy_event_stays_frozen(signed: List[bytes]) -> None:
    eager, event = Event.from_signed_bytes(signed[0]), lazy(signed[0])
    for target in (eager, event):
        with pytest.raises(ValidationError, match="frozen"):
            target.sequence = 5  # type: ignore[misc]
    assert event.sequence == eager.sequence == 1


def test_unknown_attributes_and_private_names_behave_as_on_any_model(signed: List[bytes]) -> None:
    event = lazy(signed[0])
    with pytest.raises(AttributeError):
        event.no_such_field  # type: ignore[attr-defined]  # noqa: B018
    assert not is_materialized(event)  # a name that is not a field parses nothing
    assert event._signed_bytes is signed[0]


def test_bytes_that_are_not_an_event_fail_at_first_use() -> None:
    """The lazy form is only for bytes the Core verified; over other bytes the eager parse's
    error arrives at the first use instead (``from_signed_bytes`` raises at once)."""
    bad = b'{"eventId": "x"}'
    with pytest.raises(ValidationError):
        Event.from_signed_bytes(bad)
    event = lazy(bad)
    with pytest.raises(ValidationError):
        event.kind  # noqa: B018
    with pytest.raises(ValidationError):
        event.model_dump()


def test_threads_materializing_one_event_agree(signed: List[bytes]) -> None:
    event, answers = lazy(signed[-1]), []
    barrier = threading.Barrier(8)

    def read() -> None:
        barrier.wait()
        answers.append(event.model_dump())

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [Event.from_signed_bytes(signed[-1]).model_dump()] * 8


def test_eager_and_hand_built_events_are_unchanged(signed: List[bytes]) -> None:
    eager = Event.from_signed_bytes(signed[0])
    built = Event(id=eager.id, kind=eager.kind, actor=eager.actor, action_id="a-1",
                  occurred_at=eager.occurred_at)
    assert is_materialized(eager) and is_materialized(built)
    assert built.cause.id == "a-1" and built.signed_bytes == b""
    assert Event.model_construct(**dict(eager)).id == eager.id
