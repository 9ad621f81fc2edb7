"""Conversations and Messages through ``core.Core`` (§9, §4 invariant 2): the Rust engine
decides ``message.*`` Commands on the generic perform path; a positive and a negative Command
of the family, with the Event kind and the §19 wire code."""

from __future__ import annotations

import asyncio

import pytest

from core_support import COORDINATOR, GROUP, OWNER, REGISTRY, WORKER, create, make_core, signed
from missionweaveprotocol.core import MissionWeaveProtocolError
from missionweaveprotocol.models import EventKind, MessageAmendmentKind, Query, QueryKind
from missionweaveprotocol.signed_documents import SignedDocumentCodec
from missionweaveprotocol.signed_documents import SignedDocumentKind

MAIN = "urn:missionweaveprotocol:conversation:finance-main"
M1 = "urn:missionweaveprotocol:message:py-1"
M2 = "urn:missionweaveprotocol:message:py-2"


def post(actor: str, message_id: str, **extra: object) -> bytes:
    payload = {"messageId": message_id, "conversationId": MAIN,
               "content": [{"type": "text", "text": "Deploy immediately."}]}
    payload.update(extra)
    return signed("message.post", actor, payload)


def refusal(core: object, raw: bytes) -> MissionWeaveProtocolError:
    before = core.store.last_sequence(GROUP)  # type: ignore[attr-defined]
    with pytest.raises(MissionWeaveProtocolError) as raised:
        asyncio.run(core.perform(raw))  # type: ignore[attr-defined]
    assert core.store.last_sequence(GROUP) == before, "a refusal appends nothing"  # type: ignore[attr-defined]
    return raised.value


def test_post_and_correct_emit_message_events() -> None:
    core = make_core()
    asyncio.run(core.perform(create()))
    posted = asyncio.run(core.perform(post(COORDINATOR, M1)))
    assert posted.kind == EventKind.MESSAGE_POSTED
    SignedDocumentCodec().verify(SignedDocumentKind.EVENT, posted.signed_bytes, REGISTRY)
    message = posted.payload["message"]
    assert message["authority"] is False  # type: ignore[index]
    assert message["author"] == {"type": "agent", "id": COORDINATOR}  # type: ignore[index]
    corrected = asyncio.run(core.perform(signed("message.correct", COORDINATOR, {
        "messageId": M2, "targetMessageId": M1, "reason": "after approval only",
        "content": [{"type": "text", "text": "Deploy after approval."}]})))
    assert corrected.kind == EventKind.MESSAGE_CORRECTED
    assert corrected.payload["message"]["kind"] == MessageAmendmentKind.CORRECTION  # type: ignore[index]
    assert corrected.payload["targetState"] == "corrected"
    # The Message is queried by ID within its Group (§9; Message IDs are Group-scoped).
    found = asyncio.run(core.query(Query(kind=QueryKind.MESSAGE, entity_id=M1, group_id=GROUP)))
    assert found.value["state"] == "corrected"  # type: ignore[index]
    assert found.value["lastAmendmentId"] == M2  # type: ignore[index]


def test_a_non_member_and_an_authority_claim_are_refused() -> None:
    core = make_core()
    asyncio.run(core.perform(create()))
    # The Worker has no Membership in the Group (§9 "any Group member").
    assert refusal(core, post(WORKER, M1)).wire_code == "MEMBERSHIP_REQUIRED"
    # A Message never authorizes (conformance vector message-authorizes-action).
    error = refusal(core, post(OWNER, M1, authority=True))
    assert error.wire_code == "SCHEMA_VALIDATION_FAILED"
    # Only the author corrects.
    asyncio.run(core.perform(post(OWNER, M1)))
    error = refusal(core, signed("message.correct", COORDINATOR, {
        "messageId": M2, "targetMessageId": M1, "reason": "r",
        "content": [{"type": "text", "text": "x"}]}))
    assert (error.wire_code, error.reason) == ("AUTH_FORBIDDEN", "not_message_author")
