"""The write side of a ``MemoryStore``: the entries' bookkeeping (``Bookkeeping``).

Adding an entry (with supersession: a new assertion of an extracted slot marks the
slot's previous entry superseded), the policy's hooks at add and tick, the uniform
budget, removal on the caller's decision, and the one removal path every removal goes
through: it checks a hook's removals, writes them to the forget log (and the backend),
and compacts the columns when enough rows are dead. The read side (``retrieve``) is
``memcore.store``'s, durability (``open`` / ``close``) ``memcore.durable``'s.

An add reads its text's entry, what it is whatever its time (``KnownTexts``): its
vector, the vector's non-zero dimensions, its importance and its token count. Texts
recur, within a store and across the stores of a worker's jobs, so a store keeps each
text's entry, and the process keeps the last store's: valid for another store while its
vector is the one that store's embedder hands out (the same read-only vector object:
``memcore.embed``). Nothing is kept for an embedder that hands out a writeable vector of
its own each time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from memcore.backends import Backend, make_backend
from memcore.columns import Columns, Sparse
from memcore.embed import Embedder
from memcore.extract.base import Extractor
from memcore.forget_log import ForgetLog, as_int64, make_batch
from memcore.importance import text_cost
from memcore.params import StoreParams
from memcore.policies.base import Policy, Removal, Removals
from memcore.relevance_table import relevance_table
from memcore.text import parse_tags

Known = tuple[np.ndarray, Sparse | None, float, int]  # vector, its sparse form, imp., tokens

_PROCESS: dict[str, Known] = {}  # the last store's entry of each text


class KnownTexts:
    """A store's entries of the texts it has met (``kept``, dropped wholesale past
    ``limit``), and ``know`` for a text it has not."""

    LIMIT = 4096  # texts whose entry is kept, by a store and by the process

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.kept: dict[str, Known] = {}
        self.limit = self.LIMIT

    def know(self, text: str, cols: Columns) -> Known:
        """``text``'s entry (its sparse form as ``cols`` makes it), kept when its vector
        is read-only."""
        vec = self.embedder.embed(text)
        if vec.flags.writeable:  # (a vector of its own each time: nothing kept)
            return vec, None, *text_cost(text)
        known = _PROCESS.get(text)  # (another store's, of the same vector: the same)
        if known is None or known[0] is not vec:
            known = vec, cols.sparse_of(vec), *text_cost(text)
            if len(_PROCESS) >= self.limit:
                _PROCESS.clear()
            _PROCESS[text] = known
        if len(self.kept) >= self.limit:
            self.kept.clear()
        self.kept[text] = known
        return known


class Bookkeeping:
    """The entries of a store and every change to them; ``MemoryStore`` adds retrieval
    and durability."""

    COMPACT_MIN_DEAD = 1024
    FEW_ROWS = 8  # a removal of this many rows or fewer is read as numbers

    def __init__(
        self,
        policy: Policy,
        embedder: Embedder,
        extractor: Extractor | None,
        params: StoreParams | None = None,
        backend: Backend | None = None,
    ) -> None:
        """``backend`` overrides the one ``params`` names (``open`` passes a reopened one).
        Raises ValueError when the backend cannot be created (e.g. its path exists)."""
        self.policy = policy
        self.embedder = embedder
        self.extractor = extractor
        self.params = params or StoreParams()
        p = self.params
        self.cols = Columns(embedder.dim)
        self.forget_log = ForgetLog(self._log_keep())
        self._slot_ids: dict[str, int] = {}
        self._slot_names: list[str] = []
        self._slot_head: dict[int, int] = {}   # slot id -> row of its unsuperseded entry
        self._row_of_obs: dict[int, int] = {}
        self._next_eid = 0
        self.live_tokens = 0
        self.peak_size = 0
        self.backend = backend if backend is not None else make_backend(p.backend, p.path)
        # a backend that keeps no removal (the in-memory one): a removal is logged as its
        # records' fields, no batch of arrays made (``ForgetLog.add_records``)
        self._log_only = type(self.backend).on_remove is Backend.on_remove
        # hooks an add calls only where they are the policy's or the backend's own
        self._reacts = type(policy).on_add is not Policy.on_add
        self._commits = type(self.backend).commit is not Backend.commit
        # the policy's quiet turns (``Policy.quiet_until``): [from, until), none yet
        self._quiets = type(policy).quiet_until is not Policy.quiet_until
        self._quiet: tuple[float, float] = (0.0, -math.inf)
        self._budgeted = bool(p.budget or p.budget_tokens)
        self._tag_masks: dict[str, int] = {}  # raw meta ``tags`` -> their bits
        self._known = KnownTexts(embedder)  # (its ``kept`` read directly: the hot path)
        self._texts = relevance_table(embedder)  # (None: relevance is summed per row)
        if self._texts is not None:
            self.cols.text_generation = self._texts.generation

    def _log_keep(self) -> int | None:
        keep = self.params.log_keep
        return None if keep < 0 else keep

    # -- size ---------------------------------------------------------------
    @property
    def size(self) -> int:
        return self.cols.n_live

    def holds(self, obs_id: int) -> bool:
        return obs_id in self._row_of_obs

    def slot_of(self, obs_id: int) -> str | None:
        """The slot the extractor assigned to a live observation (diagnostics)."""
        row = self._row_of_obs.get(obs_id)
        if row is None:
            return None
        sid = self.cols.slot.item(row)
        return None if sid < 0 else self._slot_names[sid]

    # -- write path ---------------------------------------------------------
    def add(self, text: str, t: int, obs_id: int | None = None,
            meta: Mapping[str, str] | None = None) -> int:
        """Store one observation; returns its entry id."""
        cols = self.cols
        slot = self.extractor.extract(text) if self.extractor is not None else None
        sid, head = -1, None
        if slot is not None:
            sid = self._slot_ids.get(slot, -1)
            if sid < 0:  # a slot seen for the first time: intern it
                sid = self._slot_ids[slot] = len(self._slot_names)
                self._slot_names.append(slot)
            head = self._slot_head.get(sid)
        known = self._known.kept.get(text)
        if known is None:
            known = self._known.know(text, cols)
        vec, sparse, importance, ntok = known
        row = cols.append(vec, sparse)
        if head is not None:
            cols.superseded[head] = True
            cols.superseded_by_newest = head
        texts = self._texts
        if texts is not None and cols.text_generation == texts.generation:
            cols.text_id[row] = texts.intern(text, vec)
            if cols.text_generation != texts.generation:  # (it started over)
                cols.text_generation = -1
        eid = self._next_eid
        self._next_eid = eid + 1
        obs = eid if obs_id is None else obs_id
        cols.eid[row] = eid
        cols.obs_id[row] = obs
        cols.turn[row] = t
        cols.importance[row] = importance
        cols.slot[row] = sid
        cols.ntok[row] = ntok
        cols.last_access[row] = t
        cols.tags[row] = self._tag_mask(meta) if meta else 0
        cols.texts[row] = text
        if sid >= 0:
            self._slot_head[sid] = row
        self._row_of_obs[obs] = row
        self.live_tokens += ntok
        if not self._reacts or (head is None and self._quiet[0] <= t < self._quiet[1]):
            removals = None  # (``Policy.quiet_until``: an on_add that would remove nothing)
        else:
            removals = self.policy.on_add(cols, row, t)
            if self._quiets:
                self._quiet = (t, self.policy.quiet_until(cols, t))
        if removals is not None:
            self._apply(removals, t)
        if self._budgeted:
            self._apply(self._over_budget(t), t)
        if cols.n_live > self.peak_size:
            self.peak_size = cols.n_live
        if self._commits:
            self.backend.commit(cols, self._slot_names, self.peak_size)
        return eid

    def _tag_mask(self, meta: Mapping[str, str] | None) -> int:
        """The tag bits of an observation's meta, kept per raw ``tags`` string (a tag's
        bit never changes once given)."""
        raw = meta.get("tags", "") if meta else ""
        mask = self._tag_masks.get(raw)
        if mask is None:
            mask = self._tag_masks[raw] = self.cols.tag_mask(parse_tags(meta))
        return mask

    def _over_budget(self, now: int) -> Removal | None:
        """The uniform budget: while the store holds more than ``budget`` entries or
        ``budget_tokens`` tokens, the entry of lowest strength goes (the policy's
        ranking strength, 1 for a policy without one; the older first on a tie)."""
        cols, p = self.cols, self.params
        excess_n = cols.n_live - p.budget if p.budget else 0
        excess_tok = self.live_tokens - p.budget_tokens if p.budget_tokens else 0
        if excess_n <= 0 and excess_tok <= 0:
            return None
        live = np.flatnonzero(cols.live[: cols.n])
        strength = self.policy.strength(cols, now)
        s = np.ones(len(live)) if strength is None else np.asarray(strength)[live]
        weakest = np.lexsort((cols.eid[live], s))  # lowest strength, then oldest
        k = max(excess_n, 0)
        if excess_tok > 0:  # enough of the weakest to bring the tokens under the budget
            freed = np.cumsum(cols.ntok[live[weakest]])
            k = max(k, int(np.searchsorted(freed, excess_tok)) + 1)
        return Removal(live[weakest[:k]], "budget", s[weakest[:k]])

    def forget(self, obs_ids: Sequence[int], now: int, reason: str) -> None:
        """Remove live observations on the caller's decision (a harness-side policy such
        as the oracle), through the same removal path and forget log as a policy's."""
        rows = np.array([self._row_of_obs[o] for o in obs_ids], dtype=np.int64)
        if self._apply(Removal(rows, reason, np.full(len(rows), np.nan)), now):
            self.backend.commit(self.cols, self._slot_names, self.peak_size)

    def tick(self, now: int) -> None:
        removals = self.policy.on_tick(self.cols, now)
        if removals is not None:
            self._apply(removals, now)
        self.backend.commit(self.cols, self._slot_names, self.peak_size)

    # -- the one removal path -----------------------------------------------
    def _apply(self, removals: Removals, now: int) -> bool:
        """Apply a hook's removals, all or none: every row must be live and named once
        across them, checked before anything is removed. Returns whether any was."""
        if removals is None:
            return False
        cols = self.cols
        if type(removals) is Removal and 0 < len(removals.rows) <= self.FEW_ROWS:
            self._remove_few(removals, now)  # the usual: a row or a few, read as numbers
        else:
            if isinstance(removals, list):
                batch = [r for r in removals if len(r.rows)]
            else:
                batch = [removals] if len(removals.rows) else []
            if not batch:
                return False
            rows = (as_int64(batch[0].rows) if len(batch) == 1
                    else np.concatenate([r.rows for r in batch]))
            if np.count_nonzero(cols.live[rows]) != len(rows):
                raise RuntimeError(f"policy {self.policy.name!r} asked to remove a dead entry")
            if len(rows) > 1 and len(set(rows.tolist())) < len(rows):
                raise RuntimeError(
                    f"policy {self.policy.name!r} asked to remove an entry twice")
            for removal in batch:
                if self._log_only and len(removal.rows) <= self.FEW_ROWS:
                    self._log_few(removal, removal.rows.tolist(), now)
                else:
                    self._remove(removal, now)
        if cols.n - cols.n_live >= max(self.COMPACT_MIN_DEAD, cols.n_live):
            self._compact()
        return True

    def _remove_few(self, removal: Removal, now: int) -> None:
        """A removal of a few rows, checked as ``_apply`` checks them, read as numbers."""
        rows, live = removal.rows.tolist(), self.cols.live
        if not (live.item(rows[0]) if len(rows) == 1 else all(live.item(r) for r in rows)):
            raise RuntimeError(f"policy {self.policy.name!r} asked to remove a dead entry")
        if len(rows) > 1 and len(set(rows)) < len(rows):
            raise RuntimeError(f"policy {self.policy.name!r} asked to remove an entry twice")
        if self._log_only:
            self._log_few(removal, rows, now)
        else:
            self._remove(removal, now)

    def _log_few(self, removal: Removal, rows: list[int], now: int) -> None:
        """A checked removal of a few rows, logged as its records' fields (a backend
        that keeps no removal), its rows dropped."""
        cols = self.cols
        eid, obs_id, turn, last, texts = (
            cols.eid, cols.obs_id, cols.turn, cols.last_access, cols.texts)
        into, reason, when = removal.merged_into, removal.reason, int(now)
        if len(rows) == 1:  # (the usual: no list made)
            r = rows[0]
            obs = [obs_id.item(r)]
            self.forget_log.add_records([(
                eid.item(r), obs[0], reason, float(removal.scores[0]), when,
                when - turn.item(r), last.item(r), texts[r],
                -1 if into is None else int(into[0]))])
        else:
            merged = [-1] * len(rows) if into is None else as_int64(into).tolist()
            scores = np.asarray(removal.scores, np.float64).tolist()
            obs = [obs_id.item(r) for r in rows]
            self.forget_log.add_records([
                (eid.item(r), o, reason, score, when, when - turn.item(r), last.item(r),
                 texts[r], m) for r, o, score, m in zip(rows, obs, scores, merged,
                                                        strict=True)])
        for r, o in zip(rows, obs, strict=True):
            self._drop_row(r, o)

    def _remove(self, removal: Removal, now: int) -> None:
        """A removal's records as one batch of arrays (the backend's to keep, if it
        keeps them), its rows dropped."""
        cols = self.cols
        rows = as_int64(removal.rows)  # (the gathers below copy)
        at = rows.tolist()
        batch = make_batch(
            eid=cols.eid[rows], obs_id=cols.obs_id[rows], reason=removal.reason,
            score=removal.scores, turn=now,
            age=now - cols.turn[rows], last_access=cols.last_access[rows],
            texts=[cols.texts[r] for r in at], merged_into=removal.merged_into,
        )
        self.forget_log.add(batch)
        self.backend.on_remove(batch)
        for r, o in zip(at, batch.obs_id.tolist(), strict=True):
            self._drop_row(r, o)

    def _drop_row(self, r: int, obs: int) -> None:
        """A removed row's bookkeeping: dead, its tokens freed, its observation and (if
        it was its slot's newest) its slot's head forgotten."""
        self.cols.kill(r)
        self.live_tokens -= self.cols.ntok.item(r)
        del self._row_of_obs[obs]
        sid = self.cols.slot.item(r)
        if sid >= 0 and self._slot_head.get(sid) == r:
            del self._slot_head[sid]

    def _compact(self) -> None:
        """Drop the dead rows; every map from rows follows them."""
        old_rows = self.cols.compact()
        self.backend.on_compact(old_rows)
        new_of_old = {int(old): new for new, old in enumerate(old_rows)}
        self._row_of_obs = {o: new_of_old[r] for o, r in self._row_of_obs.items()}
        self._slot_head = {s: new_of_old[r] for s, r in self._slot_head.items()}
