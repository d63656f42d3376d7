//! The record of an agent run: [`Message`]s exchanged with the model, the immutable `Turn`s the
//! loop appends (one per program run), and the `Step` that ends a run.

mod message;
pub mod wire;

pub use message::{Message, MessageToolCall, Role};
