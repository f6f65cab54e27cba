"""The forget log: one record per removal, appended by the store's one removal path."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ForgetRecord:
    eid: int
    obs_id: int
    reason: str
    score: float
    turn: int       # when it was removed
    age: int        # turns since it was observed
    last_access: int
    text: str
    merged_into: int = -1  # the entry id it was merged into, or -1


@dataclass
class ForgetLog:
    """Append-only, columnar (chunks of arrays), so millions of removals stay cheap."""

    _chunks: list[dict[str, np.ndarray]] = field(default_factory=list)
    _texts: list[list[str]] = field(default_factory=list)
    _reasons: list[str] = field(default_factory=list)

    def append(
        self,
        *,
        eid: np.ndarray,
        obs_id: np.ndarray,
        reason: str,
        score: np.ndarray,
        turn: int,
        age: np.ndarray,
        last_access: np.ndarray,
        texts: list[str],
        merged_into: np.ndarray | None = None,
    ) -> None:
        into = (np.full(len(eid), -1, dtype=np.int64) if merged_into is None
                else np.asarray(merged_into, dtype=np.int64))
        self._chunks.append(
            {"eid": eid, "obs_id": obs_id, "score": score, "age": age,
             "last_access": last_access, "turn": np.full(len(eid), turn, dtype=np.int64),
             "merged_into": into}
        )
        self._reasons.append(reason)
        self._texts.append(texts)

    def __len__(self) -> int:
        return sum(len(c["eid"]) for c in self._chunks)

    def counts(self) -> dict[str, int]:
        """Removals per reason."""
        out: dict[str, int] = {}
        for chunk, reason in zip(self._chunks, self._reasons, strict=True):
            out[reason] = out.get(reason, 0) + len(chunk["eid"])
        return out

    def records(self) -> list[ForgetRecord]:
        out = []
        for chunk, reason, texts in zip(self._chunks, self._reasons, self._texts, strict=True):
            for i, text in enumerate(texts):
                out.append(
                    ForgetRecord(
                        int(chunk["eid"][i]), int(chunk["obs_id"][i]), reason,
                        float(chunk["score"][i]), int(chunk["turn"][i]), int(chunk["age"][i]),
                        int(chunk["last_access"][i]), text, int(chunk["merged_into"][i]),
                    )
                )
        return out
