//! Rendering an agent's turn history as the messages the model sees next (compression
//! strategies), and keeping any chat history within message and token budgets.
