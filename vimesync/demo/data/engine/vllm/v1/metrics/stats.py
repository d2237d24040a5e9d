"""Per-iteration and per-request statistics."""

from dataclasses import dataclass, field


@dataclass
class RequestStateStats:
    """Stats that need to be tracked across delta updates."""

    num_generation_tokens: int = 0
    arrival_time: float = 0.0
    queued_ts: float = 0.0
    scheduled_ts: float = 0.0
    first_token_ts: float = 0.0
    last_token_ts: float = 0.0


@dataclass
class IterationStats:
    """Stats associated with a single set of EngineCoreOutputs."""

    num_generation_tokens: int = 0
    num_prompt_tokens: int = 0
    num_preempted_reqs: int = 0
    time_to_first_tokens_iter: list[float] = field(default_factory=list)
    inter_token_latencies_iter: list[float] = field(default_factory=list)

    def update_from_output(self, num_new_tokens: int, is_prefilling: bool, prompt_len: int) -> None:
        self.num_generation_tokens += num_new_tokens
        if is_prefilling:
            self.num_prompt_tokens += prompt_len


@dataclass
class SchedulerStats:
    """Stats associated with the scheduler."""

    num_running_reqs: int = 0
    num_waiting_reqs: int = 0
    kv_cache_usage: float = 0.0
