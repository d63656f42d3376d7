"""ptc as the code tool of a pydantic-ai agent: the model writes one PTC-Lisp program instead of
many tool calls, and the program runs in-process, in the sandbox. Run offline with pydantic-ai's
FunctionModel, which plays the model; with a real model, pass its name to Agent instead."""

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import ptc

ORDERS = [
    {"id": 1, "customer": "ada", "total": 120.0, "status": "open"},
    {"id": 2, "customer": "bob", "total": 35.5, "status": "shipped"},
    {"id": 3, "customer": "ada", "total": 80.0, "status": "open"},
]


def refund(order_id):
    """Refunds an order."""
    return {"refunded": order_id}


# One session for the conversation: what a program defines, the next one sees.
session = ptc.Session(data={"orders": ORDERS}, tools=[refund])


def play_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """What a model would answer: first a program, then the answer from its result."""
    returned = [part.content for message in messages if isinstance(message, ModelRequest)
                for part in message.parts if isinstance(part, ToolReturnPart)]
    if not returned:
        program = "(let [open (filter #(= (:status %) \"open\") data/orders)] {:count (count open) :total (reduce + (map :total open))})"
        return ModelResponse(parts=[ToolCallPart(tool_name="run_program", args={"program": program})])
    return ModelResponse(parts=[TextPart(f"Open orders: {returned[-1]}")])


agent = Agent(FunctionModel(play_model), system_prompt="Answer with PTC-Lisp programs; data/orders holds the orders.")


@agent.tool_plain
def run_program(program: str) -> str:
    """Runs a PTC-Lisp program over data/orders (tool/refund refunds one); returns its value."""
    try:
        result = session.run(program)
    except ptc.PtcError as error:
        return str(error)
    return result.text


print(agent.run_sync("How many orders are open, and for how much?").output)
