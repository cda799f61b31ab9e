"""Step-by-step log and the pass/fail tally the run ends with."""

import time


class Report:

    def __init__(self):
        self.start = time.monotonic()
        self.passed = []
        self.failed = []

    def elapsed(self) -> str:
        seconds = int(time.monotonic() - self.start)
        return f'{seconds // 60:02d}:{seconds % 60:02d}'

    def step(self, title: str) -> None:
        print(f'\n[{self.elapsed()}] == {title}', flush=True)

    def info(self, text: str) -> None:
        print(f'[{self.elapsed()}]    {text}', flush=True)

    def check(self, name: str, ok: bool, detail: str = '') -> bool:
        (self.passed if ok else self.failed).append(name)
        mark = 'PASS' if ok else 'FAIL'
        suffix = f' ({detail})' if detail else ''
        print(f'[{self.elapsed()}]    {mark} {name}{suffix}', flush=True)
        return ok

    def summary(self) -> str:
        return (f'{len(self.passed)} passed, {len(self.failed)} failed '
                f'(in {self.elapsed()})')
