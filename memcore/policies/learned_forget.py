"""STUB — replaced by the learned-forget implementation."""

from memcore.policies.base import Policy, register_policy


@register_policy("learned_forget")
class LearnedForget(Policy):
    description = "stub"
