"""The synchronous engine front end."""

import logging
import time
from collections import deque

from vllm.sampling_params import SamplingParams

logger = logging.getLogger(__name__)


class LLMEngine:
    """Accepts requests, schedules them and returns outputs."""

    def __init__(self, model: str, max_num_seqs: int = 256) -> None:
        self.model = model
        self.max_num_seqs = max_num_seqs
        self.waiting: deque = deque()
        self.running: list = []
        self.start_time = time.monotonic()

    def add_request(self, request_id: str, prompt: str, params: SamplingParams) -> None:
        """Queue a request for scheduling."""
        self.waiting.append((request_id, prompt, params))
        logger.debug("queued %s (%d waiting)", request_id, len(self.waiting))

    def abort_request(self, request_id: str) -> bool:
        """Drop a request wherever it is; True if it was found."""
        for queue in (self.waiting, self.running):
            for item in list(queue):
                if item[0] == request_id:
                    queue.remove(item)
                    return True
        return False

    def has_unfinished_requests(self) -> bool:
        return bool(self.waiting or self.running)

    def step(self) -> list:
        """Run one scheduling iteration and return finished outputs."""
        while self.waiting and len(self.running) < self.max_num_seqs:
            self.running.append(self.waiting.popleft())
        finished, self.running = self.running, []
        return [{"request_id": rid, "text": prompt[::-1]} for rid, prompt, _ in finished]

    def get_stats(self) -> dict:
        return {
            "num_waiting": len(self.waiting),
            "num_running": len(self.running),
            "uptime_s": time.monotonic() - self.start_time,
        }
