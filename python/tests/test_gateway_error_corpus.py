"""The cross-host corpus of bad input (tests/errors/gateway-frames.json) through the Python
GroupGateway: the same frames and close codes as the Rust server and the Node host (checked
there by core/gateway/tests/error_corpus.rs and js/test/rust-server.test.mjs).

Text and binary messages go through the FastAPI app over a WebSocket (TestClient). Invalid
UTF-8 and a message over the size limit never reach an ASGI app: the ASGI server answers them
itself (uvicorn closes with 1007 and 1009). Those two cases are checked on the native
connection the app drives, which hosts reading frame headers themselves use.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from gateway_support import world

CORPUS = json.loads(
    (Path(__file__).resolve().parents[2] / "tests" / "errors" / "gateway-frames.json").read_text()
)
CASES: List[Dict[str, Any]] = CORPUS["cases"]


def _normalized(raw: Union[str, bytes]) -> Dict[str, Any]:
    frame: Dict[str, Any] = json.loads(raw)
    frame["frameId"] = "<frame>"
    error = frame.get("error")
    if isinstance(error, dict):
        error.pop("occurredAt", None)
    return frame


def _over_the_socket(case: Dict[str, Any]) -> Tuple[List[Dict[str, Any]], Union[int, str]]:
    _clock, _core, gateway = world()
    frames: List[Dict[str, Any]] = []
    close: Union[int, str] = "open"
    with TestClient(gateway.app) as client, client.websocket_connect("/ws") as ws:
        if "text" in case:
            ws.send_text(case["text"])
        else:
            ws.send_bytes(bytes.fromhex(case["binaryHex"]))
        expected = len(case["frames"])
        for _ in range(expected):
            frames.append(_normalized(ws.receive_text()))
        if case["close"] != "open":
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            close = closed.value.code
    return frames, close


def _on_the_native_connection(case: Dict[str, Any]) -> Tuple[List[Dict[str, Any]], Union[int, str]]:
    clock, _core, gateway = world()
    now = int(clock().timestamp() * 1000)
    connection = gateway._native.connect(now)
    if "textHex" in case:
        drained = connection.on_text(bytes.fromhex(case["textHex"]), now)
    else:
        drained = connection.on_too_big(now)
    raw_frames, closing, *_rest = drained
    close: Optional[Tuple[int, str]] = closing
    return [_normalized(f) for f in raw_frames], (close[0] if close else "open")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_every_case_is_answered_as_written(case: Dict[str, Any]) -> None:
    if "text" in case or "binaryHex" in case:
        frames, close = _over_the_socket(case)
    else:
        frames, close = _on_the_native_connection(case)
    assert frames == case["frames"]
    assert close == case["close"]


def test_the_corpus_covers_every_kind_of_input() -> None:
    kinds = {k for c in CASES for k in ("text", "textHex", "binaryHex", "oversizedBytes") if k in c}
    assert kinds == {"text", "textHex", "binaryHex", "oversizedBytes"}
    assert len(CASES) >= 9
