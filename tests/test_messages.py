"""The messages between the parent and a child survive their trip through the pipe unchanged."""

import pytest

from conformance import result as results
from conformance.execution import messages
from conformance.settings import Settings

EXAMPLES = [
    messages.Init(Settings(backends=["tosa"], seed=3, options={"custom_ops": "aten.tanh"})),
    messages.RunJob([("tanh", "tosa"), ("add.broadcast", "tosa")], max_batch=4),
    messages.Exit(),
    messages.Ready(cases=12),
    messages.Error("ImportError: no module named x", "Traceback ..."),
    messages.StageStarted("export", "tosa", ["tanh", "double"], mark=1024, also=["linalg"]),
    messages.StageStarted("run", "tosa", ["tanh"], mark=0),
    messages.ResultMessage(
        results.failed("tanh", "tosa", stage="lower", code="UNSUPPORTED_OP", op="aten.tanh", explanation="no", timings={"lower": 0.5})
    ),
    messages.JobDone(rss_mb=812.5, peak_rss_mb=1024.0),
    messages.Fork(),
    messages.Forked(pid=4242),
    messages.Wait(pid=4242),
    messages.Ended(returncode=-11),
    messages.Ended(returncode=None),
]


@pytest.mark.parametrize("message", EXAMPLES, ids=lambda m: type(m).__name__)
def test_every_kind_of_message_decodes_to_what_was_encoded(message):
    line = messages.encode(message)
    assert "\n" not in line  # one message, one line
    assert messages.decode(line) == message
    assert messages.decode(line.encode()) == message  # as read from the pipe


def test_every_kind_is_covered_here():
    assert {type(m) for m in EXAMPLES} == set(messages.KINDS.values())


def test_a_line_that_is_no_message_is_named_in_the_error():
    with pytest.raises(ValueError, match="kind 'hello'"):
        messages.decode('{"t": "hello", "x": 1}')
