"""Values cross between Python and PTC-Lisp as the package documents it."""

import datetime
import decimal
import fractions
import uuid

import pytest

import ptc


def test_ptc_values_become_python_objects():
    program = """
    {:int 42 :big 123456789012345678901234567890N :float 1.5 :ratio 1/3 :decimal 1.50M
     :string "text" :char \\x :keyword :done :qualified :user/id :nil nil :bool true
     :vector [1 [2 3]] :list '(1 2) :set #{1 2}
     :day #inst "2024-03-15" :uuid #uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"
     "string key" 1 7 :number-key [1 2] :vector-key}
    """
    value = ptc.run(program).value
    assert value == {
        "int": 42,
        "big": 123456789012345678901234567890,
        "float": 1.5,
        "ratio": fractions.Fraction(1, 3),
        "decimal": decimal.Decimal("1.50"),
        "string": "text",
        "char": "x",
        "keyword": "done",
        "qualified": "user/id",
        "nil": None,
        "bool": True,
        "vector": [1, [2, 3]],
        "list": [1, 2],
        "set": frozenset({1, 2}),
        "day": datetime.datetime(2024, 3, 15, tzinfo=datetime.timezone.utc),
        "uuid": uuid.UUID("f81d4fae-7dec-11d0-a765-00a0c91e6bf6"),
        "string key": 1,
        7: "number-key",
        (1, 2): "vector-key",
    }
    assert str(value["decimal"]) == "1.50"


def test_local_dates_and_instants():
    value = ptc.run('[(java.time.LocalDate/parse "2024-02-29") #inst "2024-03-15T10:30:00.250Z"]').value
    assert value == [
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 3, 15, 10, 30, 0, 250000, tzinfo=datetime.timezone.utc),
    ]


def test_hashable_places_get_hashable_values():
    value = ptc.run("#{[1 2] {:a 1} #{3}}").value
    assert value == frozenset({(1, 2), ptc.FrozenMap({"a": 1}), frozenset({3})})
    frozen = next(v for v in value if isinstance(v, ptc.FrozenMap))
    assert frozen["a"] == 1 and dict(frozen) == {"a": 1}


def test_python_values_become_ptc_values():
    data = {
        "values": {
            "int": 7,
            "big": 2**100,
            "float": 0.25,
            "ratio": fractions.Fraction(3, 4),
            "whole": fractions.Fraction(4, 2),
            "decimal": decimal.Decimal("-12.340"),
            "text": "ü",
            "none": None,
            "flag": False,
            "tuple": (1, 2),
            "set": {1},
            "frozen": frozenset({2}),
            "day": datetime.date(2024, 1, 31),
            "aware": datetime.datetime(2024, 1, 31, 12, 0, tzinfo=datetime.timezone.utc),
            "naive": datetime.datetime(2024, 1, 31, 12, 0),
            "uuid": uuid.UUID("00000000-0000-0000-0000-000000000001"),
            5: "int key",
        }
    }
    # A map of more than eight entries prints in hash order: the entries are read in one order.
    text = ptc.run(
        "(pr-str (mapv #(find data/values %) [:int :big :float :ratio :whole :decimal :text :none "
        ":flag :tuple :set :frozen :day :aware :naive :uuid 5]))",
        data=data,
    ).value
    assert text == (
        '[[:int 7] [:big 1267650600228229401496703205376N] [:float 0.25] [:ratio 3/4] [:whole 2] '
        '[:decimal -12.340M] [:text "ü"] [:none nil] [:flag false] [:tuple [1 2]] [:set #{1}] '
        '[:frozen #{2}] [:day #object[java.time.LocalDate "2024-01-31"]] '
        '[:aware #inst "2024-01-31T12:00:00.000-00:00"] [:naive #inst "2024-01-31T12:00:00.000-00:00"] '
        '[:uuid #uuid "00000000-0000-0000-0000-000000000001"] [5 "int key"]]'
    )
    assert ptc.run("(count data/values)", data=data).value == 17


def test_round_trips_keep_values():
    values = [0, -1, 2**63 - 1, -(2**63), 2**64, 1.0e300, "x", [1, [2]], {"a": {"b": [1]}},
              fractions.Fraction(-7, 3), decimal.Decimal("0.001"), frozenset({"a"}),
              datetime.date(1, 1, 1), datetime.date(9999, 12, 31)]
    for value in values:
        assert ptc.run("data/x", data={"x": value}).value == value


def test_python_objects_that_are_not_data_are_refused_with_where_they_are():
    with pytest.raises(ptc.ConversionError) as caught:
        ptc.run("1", data={"rows": [{"ok": 1}, {"when": object()}]})
    assert str(caught.value) == (
        "data/rows[1]['when']: a object is not data: pass None, bool, int, float, str, dict, "
        "list, tuple, set, frozenset, Fraction, Decimal, date, datetime or UUID (convert other "
        "objects first, e.g. a dataclass with dataclasses.asdict)"
    )
    assert isinstance(caught.value, TypeError)
    with pytest.raises(ptc.ConversionError, match=r"data/x: Decimal\('NaN'\) is not a finite number"):
        ptc.run("1", data={"x": decimal.Decimal("nan")})


def test_nesting_and_cycles_are_refused_not_overflowed():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ptc.ConversionError, match="nests deeper than 1000 levels"):
        ptc.run("1", data={"deep": deep})
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ptc.ConversionError, match="or contains itself"):
        ptc.run("1", data={"cyclic": cyclic})


def test_values_without_a_python_counterpart_fail_when_read_and_print_as_text():
    result = ptc.run("(fn [x] x)")
    assert result.text.startswith("#fn[")
    with pytest.raises(ptc.ConversionError, match=r"the result: #fn\[.*\] has no Python value \(a function\)"):
        result.value
    with pytest.raises(ptc.ConversionError) as caught:
        ptc.run("[1 (range)]").value
    assert str(caught.value) == (
        "the result[1]: #lazy-seq[range] has no Python value (a lazy sequence); return or pass "
        "data instead"
    )
    with pytest.raises(ptc.ConversionError, match="one key in Python"):
        ptc.run('{:a 1 "a" 2}').value
