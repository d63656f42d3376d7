"""A run's page: ptc.view writes it, and a notebook shows ptc.Step and ptc.Result through
_repr_html_."""

import html
import json
import pathlib

import ptc


def clojure(program):
    return f"```clojure\n{program}\n```"


def scripted(*replies):
    sent = []

    def llm(messages):
        sent.append(messages)
        return replies[len(sent) - 1]

    return llm


def two_turn_step():
    def open_tickets(queue):
        """How many tickets are open in a queue."""
        return 3

    llm = scripted(
        clojure('(println "open:" (tool/open_tickets "q-1"))'),
        clojure("(return {:open 3})"),
    )
    agent = ptc.Agent(
        "Count the <open> tickets.",
        llm=llm,
        tools=[open_tickets],
        signature="{open :int}",
    )
    return agent.run()


def test_view_writes_the_page_of_the_run(tmp_path):
    step = two_turn_step()
    target = tmp_path / "run.html"
    written = ptc.view(step, target)
    assert pathlib.Path(written) == target
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('<section class="turn"') == 2
    assert "Count the &lt;open&gt; tickets." in page
    assert '<span data-figure="signature">the value matches it</span>' in page
    usage = json.loads(step.to_json())["usage"]
    assert f'data-figure="requests" data-value="{usage["llm_requests"]}"' in page


def test_view_models_the_bill_with_the_compression_asked(tmp_path):
    step = two_turn_step()
    ptc.view(step, tmp_path / "on.html", compression="on")
    assert "<code>append-compact</code> renders them" in (tmp_path / "on.html").read_text()
    try:
        ptc.view(step, tmp_path / "bad.html", compression="no-such-strategy")
    except ValueError as e:
        assert "no-such-strategy" in str(e)
    else:
        raise AssertionError("an unknown strategy is refused")


def test_a_step_shows_its_page_in_a_notebook():
    step = two_turn_step()
    frame = step._repr_html_()
    assert frame.startswith('<iframe srcdoc="')
    page = html.unescape(frame[len('<iframe srcdoc="') : frame.index('" sandbox=')])
    assert page.count('<section class="turn"') == 2
    assert "(tool/open_tickets" in page.replace('<span class="t">', "").replace("</span>", "")


def test_a_result_shows_its_output_and_tool_calls_in_a_notebook():
    def double(x):
        """Twice x."""
        return 2 * x

    result = ptc.run('(println "hi") (tool/double 21)', tools=[double])
    frame = result._repr_html_()
    page = html.unescape(frame[len('<iframe srcdoc="') : frame.index('" sandbox=')])
    assert '<pre class="output">hi</pre>' in page
    assert '<code class="tool">double</code>' in page
    assert "<code>42</code>" in page
