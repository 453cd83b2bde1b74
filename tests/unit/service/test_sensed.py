"""The cached readings: used while at most MAX_AGE old, read again otherwise, dropped on a failure."""

import math
import time

import pytest

from nao_ik.service.link import Pending
from nao_ik.service.sensed import MAX_AGE, SensedCache

NAMES = ["A", "B"]


class FakeLink:
    """A MotionLink stand-in: ``start`` returns the call, ``result`` answers it (or fails).

    ``on_result``: called once, before the next answer (to change the world while a reading is in flight).
    A wait shorter than 10 ms fails as a time-out would on a link that slow.
    """

    timeout = 1.0

    def __init__(self):
        self.calls = []
        self.fail = False
        self.stiffness = [1.0, 0.0]
        self.on_result = None

    def start(self, method, *args, budget=None):
        if args[1:] == (False,):  # the commanded angles, asked with every reading: not counted
            method = "getAngles commanded"
        else:
            self.calls.append(method)
        return Pending(None, method, self.timeout if budget is None else min(self.timeout, budget), None)

    def result(self, pending, limit=None, cancel=True):
        if self.on_result is not None:
            hook, self.on_result = self.on_result, None
            hook()
        if self.fail:
            raise RuntimeError(f"ALMotion.{pending.what} failed: gone")
        if min(pending.limit, math.inf if limit is None else limit) < 0.01:
            raise RuntimeError(f"ALMotion.{pending.what} was not waited for: the call's time budget was spent")
        if pending.what == "getAngles commanded":
            return [0.0, 0.0]
        return [float(len(self.calls)), 1.0] if pending.what == "getAngles" else list(self.stiffness)


@pytest.fixture
def cache(mocker):
    link = FakeLink()
    c = SensedCache(link, NAMES)
    mocker.patch.object(c, "_ensure_poller")  # no polling thread: each read is seen
    return link, c


def test_a_fresh_reading_is_reused_and_an_old_one_is_not(cache):
    link, c = cache
    angles, stiffness = c.read(["B", "A"], 1.0)
    assert angles == [1.0, 2.0] and stiffness == [0.0, 1.0]  # by name, both calls in flight at once
    assert link.calls == ["getAngles", "getStiffnesses"]
    c.read(NAMES, 1.0)
    assert len(link.calls) == 2  # reused
    time.sleep(MAX_AGE + 0.005)
    c.read(NAMES, 1.0)
    assert len(link.calls) == 4  # too old: read again
    c.read(NAMES, 1.0, fresh=True)
    assert len(link.calls) == 6  # asked for fresh


def test_a_failed_reading_is_raised_and_drops_the_cache(cache):
    link, c = cache
    c.read(NAMES, 1.0)
    link.fail = True
    c.invalidate()
    with pytest.raises(RuntimeError, match="ALMotion.getAngles failed"):
        c.read(NAMES, 1.0)
    link.fail = False
    c.read(NAMES, 1.0)
    assert link.calls.count("getAngles") == 3  # nothing stale was kept


def test_a_reading_asked_after_a_command_is_collected_not_asked_again(cache):
    """follow() asks for the angles at once; a call that needs a reading newer than the command waits for that one."""
    link, c = cache
    c.read(NAMES, 1.0)
    sent = time.monotonic()  # a command goes out: the cached reading predates it
    c.follow(1.0)
    assert link.calls == ["getAngles", "getStiffnesses", "getAngles"]  # the angles only, asked, not waited for
    angles, stiffness, reading = c.read_timed(NAMES, 1.0, since=sent)
    assert len(link.calls) == 3  # the follow-up reading served it
    assert angles == [3.0, 1.0] and stiffness == [1.0, 0.0]  # its angles, the full reading's stiffnesses
    assert reading.asked > sent > reading.stiffness_asked
    later = time.monotonic()  # another command: the follow-up predates it too
    c.read_timed(NAMES, 1.0, since=later)
    assert len(link.calls) == 5  # read again, both
    c.follow(1.0)
    time.sleep(MAX_AGE + 0.005)
    c.read_timed(NAMES, 1.0, since=later)
    assert len(link.calls) == 8  # the follow-up was too old by then: read again


def test_a_follow_up_is_not_used_with_stiffnesses_too_old(cache):
    """The follow-up takes the newest full reading's stiffnesses only while those are at most MAX_AGE old."""
    link, c = cache
    c.read(NAMES, 1.0)
    time.sleep(MAX_AGE * 0.75)
    sent = time.monotonic()
    c.follow(1.0)
    time.sleep(MAX_AGE * 0.5)  # the follow-up is young, the stiffnesses it would take are not
    _, _, reading = c.read_timed(NAMES, 1.0, since=sent)
    assert link.calls == ["getAngles", "getStiffnesses", "getAngles", "getAngles", "getStiffnesses"]
    assert reading.stiffness_asked == reading.asked > sent  # a full reading of its own


def test_a_follow_up_after_a_new_almotion_does_not_take_the_old_ones_stiffnesses(cache):
    """A full reading answered after invalidate() (asked of the old ALMotion) is not kept, so a follow-up of
    a command to the new one cannot take its stiffnesses: the call reads both from the new ALMotion."""
    link, c = cache
    link.on_result = c.invalidate  # the old ALMotion goes while this reading is in flight
    c.read(NAMES, 1.0)
    link.stiffness = [0.0, 0.0]  # the new one: motors off
    sent = time.monotonic()
    c.follow(1.0)
    _, stiffness, _ = c.read_timed(NAMES, 1.0, since=sent)
    assert stiffness == [0.0, 0.0]
    assert link.calls[-2:] == ["getAngles", "getStiffnesses"]  # read fresh, not the follow-up's angles alone


def test_the_newest_stiffnesses_are_kept_whatever_reading_has_the_newest_angles(cache):
    """A full reading asked before a follow-up but answered after it still gives its (newer) stiffnesses."""
    link, c = cache
    c.read(NAMES, 1.0)
    first = c.read_timed(NAMES, 1.0)[2]
    full_asked = time.monotonic()
    full = c._start(1.0)  # a full reading in flight (the poller's)
    sent = time.monotonic()
    c.follow(1.0)
    follow_up = c.read_timed(NAMES, 1.0, since=sent)[2]
    assert follow_up.stiffness_asked == first.stiffness_asked  # the full one has not answered yet
    c._collect(c._flight._replace(asked=full_asked, angles=full[0], stiffness=full[1]), 1.0)
    newest = c.read_timed(NAMES, 1.0, since=sent)[2]
    assert newest.asked == follow_up.asked and newest.stiffness_asked == full_asked


def test_a_follow_up_asked_with_little_time_left_serves_the_next_call_within_its_own_budget(cache):
    """The command that asked for the follow-up had 1 ms left; the next call has its own budget."""
    link, c = cache
    c.read(NAMES, 1.0)
    sent = time.monotonic()
    c.follow(0.001)
    c.read_timed(NAMES, 1.0, since=sent)
    assert len(link.calls) == 3  # collected, not a time-out, not read again
