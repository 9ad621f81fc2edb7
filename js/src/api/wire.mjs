// Frames (reference `wire`, §5): strict parsing of a frame or a received frame (a COMMAND keeps
// its Command's exact bytes), encoding, and ERROR frames. Every rule is the core's `wire` module.

import { checkString } from './convert.mjs';
import { open } from './errors.mjs';
import { encoder } from './values.mjs';

/** A schema-valid frame; `json` is its RFC 8785 text. */
export class Frame {
  constructor(raw) {
    this.frameType = raw.frameType;
    this.frameId = raw.frameId;
    this.phase = raw.phase;
    this.json = raw.json;
    Object.freeze(this);
  }

  /** The frame as a JavaScript value (numbers become IEEE doubles). */
  get value() { return JSON.parse(this.json); }
}

/** A received COMMAND frame: envelope checked, the Command's exact bytes kept for verification. */
export class ReceivedCommandFrame {
  constructor(raw) {
    this.frameType = 'COMMAND';
    this.frameId = raw.frameId;
    this.protocolVersion = raw.protocolVersion;
    this.commandBytes = encoder.encode(raw.commandBytes);
    Object.freeze(this);
  }
}

export function wireApi({ raw, inputBytes }) {
  function parseFrame(bytes) { return new Frame(open(raw.parseFrame(inputBytes(bytes, 'frame')))); }

  function parseReceivedFrame(bytes) {
    const frame = open(raw.parseReceivedFrame(inputBytes(bytes, 'frame')));
    return 'commandBytes' in frame ? new ReceivedCommandFrame(frame) : new Frame(frame);
  }

  function encodeFrame(frame) {
    const input = typeof frame === 'object' && frame !== null && !ArrayBuffer.isView(frame) && !(frame instanceof ArrayBuffer)
      ? JSON.stringify(frame)
      : frame;
    return open(raw.encodeFrame(inputBytes(input, 'frame')));
  }

  function errorFrame({ frameId, code, message, occurredAt, relatedFrameId } = {}) {
    return open(raw.errorFrame(
      checkString(frameId, 'frameId'), checkString(code, 'code'), checkString(message, 'message'),
      checkString(occurredAt, 'occurredAt'),
      relatedFrameId === undefined ? undefined : checkString(relatedFrameId, 'relatedFrameId'),
    ));
  }

  return { parseFrame, parseReceivedFrame, encodeFrame, errorFrame };
}
