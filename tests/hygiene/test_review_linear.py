"""`review` stays linear in the length of a contributor's text (issue 10, point 6).

A 200 KB token took 112 s with the old IMAGE_RE / PRINTED_RE; the bound below is
generous (a linear scan of these inputs takes well under a second even on a busy machine).
"""

import time

import pytest

from torchparity.deliver.review import document as d
from torchparity.deliver.review import triage

SIZE = 400_000
HOSTILE = {
    "one token": "a" * SIZE,
    "parentheses": "(" * SIZE,
    "equals": "x=" * (SIZE // 2),
    "image openers": "![" * (SIZE // 2),
    "link openers": "](" * (SIZE // 2),
    "half images": "![a](" * (SIZE // 5),
    "blank lines": " \n" * (SIZE // 2),
}
BOUND_S = 5.0


@pytest.mark.parametrize("name", ["IMAGE_RE", "PRINTED_RE", "LOG_RE"])
def test_each_pattern_scans_a_400kb_hostile_text_quickly(name):
    pattern = getattr(d, name)
    for what, text in HOSTILE.items():
        start = time.perf_counter()
        pattern.search(text)
        took = time.perf_counter() - start
        assert took < BOUND_S, f"{name} on {what}: {took:.1f} s"


def test_whole_review_of_a_text_with_a_400kb_token_finishes():
    text = "一、torch.abs\n\n" + "gradcheck(f, x)" + "(" * SIZE + "\n" + "a" * SIZE + "\n"
    start = time.perf_counter()
    triage(text, {})
    assert time.perf_counter() - start < 3 * BOUND_S


def test_patterns_still_find_what_they_are_for():
    assert d.IMAGE_RE.search("运行截图 ![shot](run.png) 如下")
    assert d.IMAGE_RE.search("see results/a2/shot.PNG.")
    assert d.IMAGE_RE.search('<img src="x">')
    assert not d.IMAGE_RE.search("no picture, just png talk")
    assert d.PRINTED_RE.search("torch.autograd.gradcheck(f, (x,))  # True")
    assert d.PRINTED_RE.search("y = f(x)\t# RuntimeError")
    assert not d.PRINTED_RE.search("# y = f(x) # True")
    assert not d.PRINTED_RE.search("gradcheck(f, x)# True")
    assert d.LOG_RE.search("test\n....\nOK")
    assert not d.LOG_RE.search(" \n \n \n")
