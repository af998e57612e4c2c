"""The chunk codec: how the chunks of a flow, as relayed to the client, are kept in one BLOB.

When the chunks are exactly the response body cut in pieces (always, as the forwarder records
them), only (time, length) pairs are kept and the bytes come from the body."""

from __future__ import annotations

import struct

from ..flow import Chunk

_CHUNKS_INDEX = b"I"
_CHUNKS_DATA = b"D"


def pack_chunks(chunks: list[Chunk], body: bytes) -> bytes:
    if not chunks:
        return b""
    count = len(chunks)
    lengths = [len(c.data) for c in chunks]
    if sum(lengths) == len(body):
        return _CHUNKS_INDEX + struct.pack(f"<I{count}d{count}I", count, *(c.t for c in chunks), *lengths)
    parts = [_CHUNKS_DATA]
    for chunk in chunks:
        parts.append(struct.pack("<dI", chunk.t, len(chunk.data)))
        parts.append(chunk.data)
    return b"".join(parts)


def unpack_chunks(blob: bytes, body: bytes) -> list[Chunk]:
    if not blob:
        return []
    if blob[:1] == _CHUNKS_INDEX:
        (count,) = struct.unpack_from("<I", blob, 1)
        values = struct.unpack_from(f"<{count}d{count}I", blob, 5)
        chunks, offset = [], 0
        for t, length in zip(values[:count], values[count:], strict=True):
            chunks.append(Chunk(t, body[offset : offset + length]))
            offset += length
        return chunks
    chunks, offset = [], 1
    while offset < len(blob):
        t, length = struct.unpack_from("<dI", blob, offset)
        offset += 12
        chunks.append(Chunk(t, blob[offset : offset + length]))
        offset += length
    return chunks
