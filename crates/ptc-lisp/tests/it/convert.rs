//! Converting between values and Rust types through serde: `to_value`, `from_value` and
//! `Outcome::value_as`. Each case states the printed value a Rust value converts to, and that
//! converting it back gives the Rust value again.

use pretty_assertions::assert_eq;
use ptc_lisp::pr_str;
use ptc_lisp::{ErrorKind, Runtime, UserNamespace, Value, eval_str, from_value, to_value};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

/// `rust` converts to the value printed `printed`, and that value converts back to `rust`.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(rust: T, printed: &str) {
    let value = to_value(&rust).unwrap_or_else(|e| panic!("{rust:?}: {}", e.message));
    assert_eq!(pr_str(&value), printed, "{rust:?}");
    let back: T = from_value(&value).unwrap_or_else(|e| panic!("{printed}: {}", e.message));
    assert_eq!(back, rust, "{printed}");
}

/// The message converting the value `source` evaluates to into a `T` fails with.
fn read_error<T: DeserializeOwned + Debug>(source: &str) -> String {
    let value = eval_str(source).unwrap_or_else(|e| panic!("{source}: {}", e.message));
    match from_value::<T>(&value) {
        Ok(v) => panic!("{source} read as {v:?}"),
        Err(e) => {
            assert_eq!(e.kind, ErrorKind::Type, "{source}");
            e.message
        }
    }
}

/// What the value `source` evaluates to reads as.
fn read<T: DeserializeOwned>(source: &str) -> T {
    let value = eval_str(source).unwrap_or_else(|e| panic!("{source}: {}", e.message));
    from_value(&value).unwrap_or_else(|e| panic!("{source}: {}", e.message))
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Order {
    id: u32,
    customer: String,
    lines: Vec<Line>,
    note: Option<String>,
    status: Status,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Line {
    sku: String,
    quantity: u16,
    price: f64,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
enum Status {
    Open,
    Shipped { carrier: String, days: u8 },
    Refunded(f64),
    Split(u32, u32),
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Meters(f64);

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Marker;

#[test]
fn structs_become_maps_with_keyword_keys() {
    round_trip(
        Order {
            id: 7,
            customer: "Ann".into(),
            lines: vec![Line {
                sku: "tea".into(),
                quantity: 2,
                price: 4.5,
            }],
            note: None,
            status: Status::Open,
        },
        r#"{:id 7, :customer "Ann", :lines [{:sku "tea", :quantity 2, :price 4.5}], :note nil, :status :Open}"#,
    );
    round_trip(Meters(2.5), "2.5");
    round_trip(Marker, "nil");
    round_trip((1, "a".to_string(), 'c', true), r#"[1 "a" \c true]"#);
}

#[test]
fn enum_variants_are_keywords_or_one_entry_maps() {
    round_trip(Status::Open, ":Open");
    round_trip(
        Status::Shipped {
            carrier: "DHL".into(),
            days: 3,
        },
        r#"{:Shipped {:carrier "DHL", :days 3}}"#,
    );
    round_trip(Status::Refunded(9.99), "{:Refunded 9.99}");
    round_trip(Status::Split(1, 2), "{:Split [1 2]}");
    assert_eq!(read::<Status>(r#""Open""#), Status::Open);
    assert_eq!(read::<Status>("'Open"), Status::Open);
}

#[test]
fn maps_keep_their_keys_and_string_keys_become_keywords() {
    round_trip(
        BTreeMap::from([("a".to_string(), 1), ("b c".to_string(), 2)]),
        "{:a 1, :b c 2}",
    );
    round_trip(
        BTreeMap::from([(1, "one".to_string()), (2, "two".to_string())]),
        r#"{1 "one", 2 "two"}"#,
    );
    round_trip(BTreeSet::from([3, 1, 2]), "[1 2 3]");
    assert_eq!(
        read::<BTreeMap<String, i64>>(r#"{:a 1 "b" 2}"#),
        BTreeMap::from([("a".to_string(), 1), ("b".to_string(), 2)])
    );
    assert_eq!(read::<BTreeSet<i64>>("#{1 2}"), BTreeSet::from([1, 2]));
}

#[test]
fn options_are_nil_or_the_value() {
    round_trip(Some(3), "3");
    round_trip(None::<i64>, "nil");
    round_trip(vec![Some("x".to_string()), None], r#"["x" nil]"#);
    assert_eq!(
        read::<Line>(r#"{:sku "tea" :quantity 1 :price 2.0 :extra "ignored"}"#),
        Line {
            sku: "tea".into(),
            quantity: 1,
            price: 2.0
        }
    );
}

#[test]
fn floats_keep_every_bit_and_the_non_finite_ones() {
    round_trip(0.1 + 0.2, "0.30000000000000004");
    round_trip(-0.0f64, "-0.0");
    round_trip(1e300, "1.0E300");
    round_trip(f64::INFINITY, "##Inf");
    round_trip(f32::MAX, "3.4028234663852886E38");
    let nan: f64 = from_value(&to_value(&f64::NAN).unwrap()).unwrap();
    assert!(nan.is_nan());
    assert_eq!(read::<f64>("3"), 3.0);
}

#[test]
fn integers_keep_their_value_up_to_64_bits() {
    round_trip(i64::MAX, "9223372036854775807");
    round_trip(i64::MIN, "-9223372036854775808");
    round_trip(u64::try_from(i64::MAX).unwrap(), "9223372036854775807");
    round_trip(-5i128, "-5");
    round_trip(255u8, "255");
    assert_eq!(read::<i64>("(* 2.0 3)"), 6);
    let too_big = to_value(&u64::MAX).err().map(|e| e.message);
    assert_eq!(
        too_big.as_deref(),
        Some("18446744073709551615 does not fit a PTC-Lisp integer (64 bits, signed)")
    );
    let nested = to_value(&vec![(1u64, u128::MAX)]).err().map(|e| e.message);
    assert_eq!(
        nested.as_deref(),
        Some(
            "at [0 1]: 340282366920938463463374607431768211455 does not fit a PTC-Lisp integer \
             (64 bits, signed)"
        )
    );
    assert_eq!(
        read_error::<u8>("300"),
        "invalid value: integer `300`, expected u8"
    );
    assert_eq!(
        read_error::<u64>("-1"),
        "invalid value: integer `-1`, expected u64"
    );
    assert_eq!(
        read_error::<i64>("2.5"),
        "invalid type: floating point `2.5`, expected i64"
    );
}

#[test]
fn what_programs_produce_reads_naturally() {
    assert_eq!(read::<String>(":paid"), "paid");
    assert_eq!(read::<String>(":user/id"), "user/id");
    assert_eq!(read::<Vec<i64>>("(map inc [1 2])"), vec![2, 3]);
    assert_eq!(read::<Vec<i64>>("(seq [])"), Vec::<i64>::new());
    assert_eq!(read::<BTreeMap<String, i64>>("nil"), BTreeMap::new());
    assert_eq!(read::<char>(r#""x""#), 'x');
    assert_eq!(
        read::<String>(r#"(java.time.LocalDate/parse "2024-03-15")"#),
        "2024-03-15"
    );
    assert_eq!(
        read::<String>("#inst \"2024-03-15T10:30:00Z\""),
        "2024-03-15T10:30:00.000Z"
    );
    assert_eq!(read::<()>("nil"), ());
}

#[test]
fn a_mismatch_says_where_it_is_and_what_was_expected() {
    assert_eq!(
        read_error::<Vec<Line>>(
            r#"[{:sku "a" :quantity 1 :price 1.0} {:sku "b" :quantity "2" :price 1.0}]"#
        ),
        r#"at [1 :quantity]: invalid type: string "2", expected u16"#
    );
    assert_eq!(
        read_error::<Line>(r#"{:sku "a" :price 1.0}"#),
        "missing field `quantity`"
    );
    assert_eq!(
        read_error::<Status>(r#"{:Shipped {:carrier "DHL" :days -1}}"#),
        "at [:Shipped :days]: invalid value: integer `-1`, expected u8"
    );
    assert_eq!(
        read_error::<Status>(":Lost"),
        "unknown variant `Lost`, expected one of `Open`, `Shipped`, `Refunded`, `Split`"
    );
    assert_eq!(
        read_error::<Status>("[:Open]"),
        "invalid type: sequence, expected a keyword naming a variant, or a map of one variant \
         keyword to its content"
    );
    assert_eq!(
        read_error::<Status>(":Refunded"),
        "the variant Refunded needs content: write it as {:Refunded ...}"
    );
    assert_eq!(
        read_error::<Line>("5"),
        "invalid type: integer `5`, expected struct Line"
    );
    assert_eq!(
        read_error::<Vec<i64>>("[1 inc]"),
        "at [1]: a function cannot be converted to a Rust value: #fn[inc]"
    );
    assert_eq!(
        read_error::<Vec<i64>>("(range)"),
        "a lazy sequence cannot be converted to a Rust value: #lazy-seq[range]; realize it in \
         the program first, e.g. with (vec (take 100 s))"
    );
    assert_eq!(
        read_error::<String>("{:a 1}"),
        "invalid type: map, expected a string"
    );
}

#[test]
fn a_value_inside_converted_data_stays_itself() {
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Envelope {
        kind: String,
        payload: Value,
    }
    let payload = eval_str(r#"{:tags #{:a} :when #inst "2024-03-15T10:30:00Z" :f inc}"#).unwrap();
    let envelope = Envelope {
        kind: "raw".into(),
        payload: payload.clone(),
    };
    let value = to_value(&envelope).unwrap();
    assert_eq!(
        pr_str(&value),
        r#"{:kind "raw", :payload {:tags #{:a}, :when #inst "2024-03-15T10:30:00.000-00:00", :f #fn[inc]}}"#
    );
    let back: Envelope = from_value(&value).unwrap();
    assert_eq!(pr_str(&back.payload), pr_str(&payload));
    // Formats that see through the wrapper still get the printed text.
    assert_eq!(serde_json::to_string(&Value::Int(1)).unwrap(), r#""1""#);
    let from_json: Value = serde_json::from_str(r#""[1 :a]""#).unwrap();
    assert_eq!(pr_str(&from_json), "[1 :a]");
    let whole: Value = from_value(&eval_str("[1 {:a 2}]").unwrap()).unwrap();
    assert_eq!(pr_str(&whole), "[1 {:a 2}]");
}

#[test]
fn strings_can_be_borrowed_from_the_value() {
    #[derive(Deserialize)]
    struct Named<'a> {
        name: &'a str,
    }
    let value = eval_str(r#"{:name "Ann"}"#).unwrap();
    let named: Named = from_value(&value).unwrap();
    assert_eq!(named.name, "Ann");
}

#[test]
fn data_goes_in_and_a_typed_result_comes_out() {
    #[derive(Serialize)]
    struct Product {
        name: &'static str,
        price: f64,
    }
    let products = [
        Product {
            name: "lamp",
            price: 120.0,
        },
        Product {
            name: "mug",
            price: 8.5,
        },
    ];
    let runtime = Runtime::new().with_data("products", to_value(&products).unwrap());
    let program = "{:names (map :name data/products) :total (reduce + (map :price data/products))}";
    let out = runtime.run_str(program, &UserNamespace::new());
    #[derive(Deserialize, PartialEq, Debug)]
    struct Summary {
        names: Vec<String>,
        total: f64,
    }
    assert_eq!(
        out.outcome.value_as::<Summary>().unwrap(),
        Summary {
            names: vec!["lamp".into(), "mug".into()],
            total: 128.5
        }
    );
    let failed = runtime.run_str("(fail {:reason :empty})", &UserNamespace::new());
    let error = failed.outcome.value_as::<Summary>().err().unwrap();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ErrorKind::Thrown, "the program failed: {:reason :empty}")
    );
    let broken = runtime.run_str("(first 5)", &UserNamespace::new());
    let error = broken.outcome.value_as::<Summary>().err().unwrap();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ErrorKind::Type, "first expects a collection, got integer 5")
    );
}

#[test]
fn deeply_nested_values_convert_without_exhausting_the_stack() {
    let depth = 900;
    let source = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    let value = ptc_lisp::read_value(&source).unwrap();
    let json: serde_json::Value = from_value(&value).unwrap();
    let back = to_value(&json).unwrap();
    assert_eq!(pr_str(&back), source);
}
