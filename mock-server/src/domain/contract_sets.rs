//! The mock's own enums of the contract's closed sets (its domain types, with
//! their behaviour and their stored form) name the values of the contract's table
//! (`mediagen_openapi::sets`), every one and in its order, on the wire and in
//! `as_str`. A value the contract gains fails here until the mock knows it.

use mediagen_openapi::sets;
use serde::Serialize;

use super::billing::TopupStatus;
use super::catalog::MediaType;
use super::generation::{FailureCode, Status};
use super::webhook::Trigger;

fn wire<T: Serialize>(value: T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(text)) => text,
        other => panic!("not a string: {other:?}"),
    }
}

#[test]
fn generation_statuses_are_the_contracts() {
    assert_eq!(
        Status::ALL.map(Status::as_str),
        sets::GenerationStatus::NAMES
    );
    assert_eq!(Status::ALL.map(wire), sets::GenerationStatus::NAMES);
}

#[test]
fn failure_codes_are_the_contracts() {
    assert_eq!(
        FailureCode::ALL.map(FailureCode::as_str),
        sets::FailureCode::NAMES
    );
    assert_eq!(FailureCode::ALL.map(wire), sets::FailureCode::NAMES);
}

#[test]
fn media_types_are_the_contracts() {
    assert_eq!(
        MediaType::ALL.map(MediaType::as_str),
        sets::MediaType::NAMES
    );
    assert_eq!(MediaType::ALL.map(wire), sets::MediaType::NAMES);
}

#[test]
fn top_up_statuses_are_the_contracts() {
    let all = [
        TopupStatus::Pending,
        TopupStatus::Succeeded,
        TopupStatus::Failed,
    ];
    assert_eq!(all.map(TopupStatus::as_str), sets::TopupStatus::NAMES);
    assert_eq!(all.map(wire), sets::TopupStatus::NAMES);
}

#[test]
fn delivery_triggers_are_the_contracts() {
    let all = [Trigger::Scheduled, Trigger::Manual];
    assert_eq!(all.map(Trigger::as_str), sets::DeliveryTrigger::NAMES);
}
