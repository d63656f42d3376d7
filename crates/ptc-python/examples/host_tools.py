"""The host answers each tool call itself: start() and resume(), and run_async with async tools."""

import asyncio

import ptc

# 1. Answer calls by hand: the run waits, holding no thread.
session = ptc.Session(tools=[ptc.Tool(name="lookup", params=["key"])])
step = session.start('(str (tool/lookup "a") "-" (tool/lookup "b"))')
answers = {"a": "alpha", "b": "beta"}
while isinstance(step, ptc.Suspended):
    print("the program asks", step.name, step.args)
    step = step.resume(answers[step.args[0]])
print(step.value)


# 2. Async tools: the calls of a pmap are awaited together.
async def fetch_price(sku):
    await asyncio.sleep(0.01)
    return {"A": 3, "B": 4, "C": 5}[sku]


async def main():
    result = await ptc.run_async('(reduce + (pmap tool/fetch_price ["A" "B" "C"]))', tools=[fetch_price])
    print(result.value)


asyncio.run(main())
