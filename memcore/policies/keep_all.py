"""keep_all: never forgets; the hoarding baseline."""

from memcore.policies.base import Policy, register_policy


@register_policy("keep_all")
class KeepAll(Policy):
    access_reranks = False  # strength never reads access state; on_access removes nothing
    description = "Never forgets; every entry ranks at strength 1."
