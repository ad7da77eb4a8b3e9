"""Phrase banks of the template writer, one bank per axis value.

Templates use ``{action}`` (a verb phrase from the tool), ``{thing}`` (the record the ask is
about, with its id), ``{detail}`` (other argument values, with a leading space or empty) and
``{topic}`` (content words of a policy clause). Status, undo and complaint templates are used
only for tools that act on a record (``writer._FITS``). The sentences around the task (greetings,
context, stance, sign-offs) are in ``filler.py``.
"""

from __future__ import annotations

__all__ = ["ASKS", "OFF_SCOPE", "OFF_THINGS"]

ASKS = {
    "do_task": (
        "Can you {action} {thing}{detail}?",
        "I need you to {action} {thing}{detail}.",
        "Please {action} {thing}{detail}.",
        "I'd like to {action} {thing}{detail}.",
        "Could you help me {action} {thing}{detail}?",
        "Is it possible to {action} {thing}{detail} today?",
        "I was hoping you could {action} {thing}{detail} for me.",
        "Would you be able to {action} {thing}{detail}?",
        "Can we {action} {thing}{detail} now?",
        "Could you {action} {thing}{detail}, please?",
        "I'm writing to ask you to {action} {thing}{detail}.",
        "Go ahead and {action} {thing}{detail}, please.",
        "I want to {action} {thing}{detail}.",
        "I'd appreciate it if you could {action} {thing}{detail}.",
    ),
    "check_status": (
        "What's happening with {thing}?",
        "Can you tell me where {thing} stands?",
        "Did anything change on {thing}?",
        "I want an update on {thing}.",
        "Is {thing} still in progress?",
        "Could you look at {thing} and tell me what is going on?",
        "Any news on {thing}?",
        "Where are we with {thing}? I tried to {action} it{detail}.",
        "Has someone already tried to {action} {thing}?",
        "Quick status check on {thing}, please.",
        "I can't tell if {thing} went through. Can you see it?",
        "What does your system show for {thing}?",
    ),
    "ask_how": (
        "How do I {action} {thing}?",
        "What do I need to do to {action} {thing}?",
        "Can you walk me through how to {action} {thing}?",
        "Is there a way for me to {action} {thing} myself?",
        "What are the steps to {action} {thing}?",
        "Who can {action} {thing}, you or me?",
        "What happens if I {action} {thing}?",
        "What information do you need from me to {action} {thing}?",
        "How would I go about it if I wanted to {action} {thing}?",
        "Is it still possible to {action} {thing}?",
        "Can I {action} {thing} online, or do you have to do it?",
        "How long does it take to {action} {thing}?",
    ),
    "change_request": (
        "Earlier I asked you to {action} {thing}, but I need it done differently{detail}.",
        "Change of plan on {thing}: please {action} it{detail} instead.",
        "I gave you the wrong details for {thing}. Can you {action} it{detail}?",
        "Scratch what I said before: please {action} {thing}{detail}.",
        "Actually, for {thing}, I now want to {action} it{detail}.",
        "Sorry, I need to redo this: {action} {thing}{detail}, please.",
        "I changed my mind about {thing} and want to {action} it{detail}.",
        "One correction on {thing}: {action} it{detail}, please.",
        "Not what I asked for on {thing}. I need you to {action} it{detail}.",
    ),
    "undo": (
        "I think I did something wrong with {thing}. Can that be undone?",
        "Please reverse whatever happened to {thing}.",
        "Someone tried to {action} {thing} and I did not want that. Can you roll it back?",
        "I clicked the wrong button on {thing}. Fix it?",
        "Is it too late to take back the change on {thing}?",
        "Undo the last change on {thing}, please.",
        "I need {thing} back the way it was before.",
        "Did I just {action} {thing} by accident? I want to cancel that.",
        "Can you put {thing} back to how it was yesterday?",
    ),
    "complain": (
        "This is the second time I'm asking about {thing}.",
        "Nobody has sorted out {thing} yet and I'm tired of waiting.",
        "I'm unhappy with how {thing} was handled. I just wanted to {action} it{detail}.",
        "Why is {thing} still a problem? All I asked was to {action} it.",
        "I keep getting errors with {thing}.",
        "I've had nothing but trouble with {thing}.",
        "Honestly, {thing} has been a mess from the start.",
        "I want to complain about {thing}. I asked to {action} it{detail} and nothing happened.",
        "Three emails and {thing} is still not fixed.",
    ),
}

OFF_SCOPE = (
    "Can you recommend a good {thing} for under {amount} dollars?",
    "What's the weather going to be like in {city} this weekend?",
    "Could you write a short poem about {city}?",
    "What time do the shops in {city} close on Sundays?",
    "Can you help me with my maths homework? It's about fractions.",
    "Do you know a good restaurant in {city}?",
    "Tell me a joke about cats.",
    "What's the exchange rate for {amount} euros today?",
    "Can you book me a table for two in {city} on Friday?",
    "How do I fix a squeaky bike chain?",
    "Who won the football game in {city} last night?",
    "Can you translate 'good morning' into five languages?",
    "Which {thing} would you buy if you were me?",
    "Is it a good time to visit {city}?",
)
OFF_THINGS = ("laptop", "pair of running shoes", "coffee machine", "phone", "backpack",
              "camera", "desk chair", "blender")
