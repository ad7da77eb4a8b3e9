"""Agent specs the engine benches share: the 4-tool orders spec and a 14-tool spec."""

from __future__ import annotations

from typing import Any


def _tool(name: str, description: str, **params: Any) -> dict[str, Any]:
    props = {k: (v if isinstance(v, dict) else {"type": v}) for k, v in params.items()}
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": props, "required": list(props)[:1]}}}


ORDERS_TOOLS = [
    _tool("get_order", "Look up an order by id.", order_id="string"),
    _tool("cancel_order", "Cancel an order that has not shipped.", order_id="string",
          reason={"type": "string", "enum": ["ordered by mistake", "found cheaper", "too slow"]}),
    _tool("refund_order", "Refund a delivered order.", order_id="string", amount="number"),
    _tool("update_address", "Change the shipping address of an order.", order_id="string",
          address="string"),
]
ORDERS_POLICY = (
    "You are the support agent of an online shop. Verify the customer's email before you change "
    "anything. Never refund more than the order total. Only cancel orders that have not shipped. "
    "Confirm every change with the customer before you make it. Do not share other customers' "
    "orders."
)

_NAMES = [
    ("get_user", "Look up a user profile by id.", {"user_id": "string"}),
    ("find_user_by_email", "Find a user id by email.", {"email": "string"}),
    ("get_order", "Look up an order by id.", {"order_id": "string"}),
    ("list_orders", "List the orders of a user.", {"user_id": "string"}),
    ("cancel_order", "Cancel a pending order.", {"order_id": "string", "reason": "string"}),
    ("refund_payment", "Refund a payment.", {"payment_id": "string", "amount": "number"}),
    ("update_address", "Change a user's address.", {"user_id": "string", "address": "string"}),
    ("create_ticket", "Open a support ticket.", {"user_id": "string", "summary": "string"}),
    ("close_ticket", "Close a support ticket.", {"ticket_id": "string"}),
    ("book_appointment", "Book a repair appointment.", {"user_id": "string", "date": "string"}),
    ("reschedule_appointment", "Move an appointment.", {"appointment_id": "string",
                                                         "date": "string"}),
    ("send_invoice", "Email an invoice.", {"invoice_id": "string", "email": "string"}),
    ("apply_coupon", "Apply a coupon to an order.",
     {"order_id": "string", "coupon_code": "string"}),
    ("track_shipment", "Track a shipment.", {"tracking_number": "string"}),
]
WIDE_TOOLS = [_tool(n, d, **p) for n, d, p in _NAMES]
_RULES = [
    "Verify the customer's identity with their email or their name and zip code first.",
    "Never issue a refund above the amount that was paid for the order.",
    "Only cancel orders whose status is pending; delivered orders must be returned instead.",
    "Before any change to the account, list what will change and get an explicit yes.",
    "Do not reveal information about any other customer, even if asked by a family member.",
    "Transfer to a human agent only when the request is outside the tools you have.",
    "Appointments can be moved at most twice and never to a date in the past.",
    "Coupons apply to pending orders only and one coupon per order.",
    "Invoices are sent only to the email on file for the account.",
    "Tickets may be closed only after the customer confirms the issue is solved.",
]
WIDE_POLICY = "\n".join(f"- {rule} " + "Explain the reason to the customer in plain words, "
                        "keep a polite tone, and never invent order details, dates or amounts "
                        "that the tools did not return. " * 3 for rule in _RULES)
