#!/usr/bin/env python3
"""Writes Tests/PushRelayCoreTests/MatrixGolden/*.json: the Matrix payload golden cases.

Expectations are written by hand from the documented rules (docs: push-gateways-and-providers.md §1.4-1.6); the few
that need arithmetic (truncation to a byte limit) are computed here by an independent, naive implementation: remove
the last character of the longest choppable string and re-encode, until the payload fits.
"""
import base64, copy, hashlib, json, os, sys

OUT = os.path.join(os.path.dirname(__file__), "..", "Tests", "PushRelayCoreTests", "MatrixGolden")
TOKEN_BYTES = bytes(range(32))
B64_TOKEN = base64.b64encode(TOKEN_BYTES).decode()
HEX_TOKEN = TOKEN_BYTES.hex()
FCM_TOKEN = "fcm-registration-token:APA91bHexample"
P256DH = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
AUTH = "BTBZMqHH6r4Tts7J_aSIgg"
ENDPOINT = "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABexample"
ROOM = "!slw48wfj34rtnrf:example.org"
EVENT = "$qTOWWTEL48yPm3uT-gdNhFcoHxfKbZuqRVnnWWSkGBs"

cases = []

def case(name, fmt, notification, expected, options=None, device=None):
    dev = {"app_id": "org.example.app", "pushkey": {"apns": B64_TOKEN, "fcm": FCM_TOKEN, "webpush": P256DH}[fmt]}
    if fmt == "webpush":
        dev["data"] = {"endpoint": ENDPOINT, "auth": AUTH}
    if device:
        for k, v in device.items():
            if v is None:
                dev.pop(k, None)
            elif k == "data" and isinstance(v, dict) and "data" in dev:
                merged = dict(dev["data"]); merged.update(v)
                dev["data"] = {k2: v2 for k2, v2 in merged.items() if v2 is not None}
            else:
                dev[k] = v
    n = dict(notification)
    n["devices"] = [dev]
    c = {"name": name, "format": fmt, "request": {"notification": n}, "expected": expected}
    if options:
        c["options"] = options
    cases.append(c)

def size(payload):
    return len(json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode())

def naive_trim(payload, limit, paths):
    """Sygnal's loop, literally: while too long, chop one character off the longest choppable (first wins ties)."""
    p = copy.deepcopy(payload)
    def get(path):
        node = p
        for s in path:
            try:
                node = node[s]
            except (KeyError, IndexError):
                return None
        return node
    def put(path, value):
        node = p
        for s in path[:-1]:
            node = node[s]
        node[path[-1]] = value
    while size(p) > limit:
        lengths = [(len(json.dumps(get(x), ensure_ascii=False).encode()), i) for i, x in enumerate(paths) if get(x)]
        if not lengths:
            return None
        best = max(lengths, key=lambda t: (t[0], -t[1]))[1]
        put(paths[best], get(paths[best])[:-1])
    return p

def apns(payload, prio="10", push_type=None, token=HEX_TOKEN):
    headers = {"apns-priority": prio}
    if push_type:
        headers["apns-push-type"] = push_type
    return {"send": {"token": token, "headers": headers, "payload": payload}}

msg = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.message", "sender": "@major:example.org",
       "sender_display_name": "Major Tom", "room_name": "Mission Control",
       "content": {"msgtype": "m.text", "body": "I'm floating in a most peculiar way."},
       "counts": {"unread": 2, "missed_calls": 1}}

# --- APNs -------------------------------------------------------------------------------------------------------
case("apns_01_message_in_named_room_with_body", "apns", msg, apns({
    "room_id": ROOM, "event_id": EVENT,
    "aps": {"alert": {"loc-key": "MSG_FROM_USER_IN_ROOM_WITH_CONTENT",
                      "loc-args": ["Major Tom", "Mission Control", "I'm floating in a most peculiar way."]}, "badge": 3}}))
n = dict(msg); n.pop("room_name"); n["room_alias"] = "#mission:example.org"; n["counts"] = {"unread": 5}
case("apns_02_room_alias_stands_in_for_room_name", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT,
    "aps": {"alert": {"loc-key": "MSG_FROM_USER_IN_ROOM_WITH_CONTENT",
                      "loc-args": ["Major Tom", "#mission:example.org", "I'm floating in a most peculiar way."]}, "badge": 5}}))
n = dict(msg); n.pop("room_name"); n.pop("counts")
case("apns_03_message_without_room_name", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT,
    "aps": {"alert": {"loc-key": "MSG_FROM_USER_WITH_CONTENT", "loc-args": ["Major Tom", "I'm floating in a most peculiar way."]}}}))
n = dict(msg); n["content"] = {"msgtype": "m.image", "body": "earth.jpg", "url": "mxc://example.org/abc"}
case("apns_04_image_in_named_room", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT,
    "aps": {"alert": {"loc-key": "IMAGE_FROM_USER_IN_ROOM", "loc-args": ["Major Tom", "earth.jpg", "Mission Control"]}, "badge": 3}}))
n.pop("room_name"); n.pop("counts")
case("apns_05_image_without_room_name", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT,
    "aps": {"alert": {"loc-key": "IMAGE_FROM_USER", "loc-args": ["Major Tom", "earth.jpg"]}}}))
n = dict(msg); n["content"] = {"msgtype": "m.emote", "body": "waves"}; n.pop("counts")
case("apns_06_emote_in_named_room", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT,
    "aps": {"alert": {"loc-key": "ACTION_FROM_USER_IN_ROOM", "loc-args": ["Mission Control", "Major Tom", "waves"]}}}))
n.pop("room_name")
case("apns_07_emote_without_room_name", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT,
    "aps": {"alert": {"loc-key": "ACTION_FROM_USER", "loc-args": ["Major Tom", "waves"]}}}))
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.encrypted", "sender": "@major:example.org",
     "room_alias": "#mission:example.org", "content": {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgAEn..."}}
case("apns_08_encrypted_sender_id_and_alias", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT,
    "aps": {"alert": {"loc-key": "MSG_FROM_USER_IN_ROOM", "loc-args": ["@major:example.org", "#mission:example.org"]}}}))
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.encrypted"}
case("apns_09_encrypted_no_sender_no_room", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT, "aps": {"alert": {"loc-key": "MSG_FROM_USER", "loc-args": [" "]}}}))
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.call.invite", "sender_display_name": "Ground Control",
     "content": {"call_id": "c1", "version": 1, "offer": {"type": "offer", "sdp": "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\n"}},
     "counts": {"missed_calls": 1}}
case("apns_10_video_call_invite", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT, "aps": {"alert": {"loc-key": "VIDEO_CALL_FROM_USER", "loc-args": ["Ground Control"]}, "badge": 1}}))
n = copy.deepcopy(n); n["content"]["offer"]["sdp"] = "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"; n.pop("counts")
case("apns_11_voice_call_invite", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT, "aps": {"alert": {"loc-key": "VOICE_CALL_FROM_USER", "loc-args": ["Ground Control"]}}}))
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.member", "sender_display_name": "Ground Control",
     "room_name": "Launch Pad", "membership": "invite", "user_is_target": True, "content": {"membership": "invite"}}
case("apns_12_invite_to_named_room", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT, "aps": {"alert": {"loc-key": "USER_INVITE_TO_NAMED_ROOM", "loc-args": ["Ground Control", "Launch Pad"]}}}))
n = dict(n); n.pop("room_name"); n.pop("membership")
case("apns_13_invite_to_chat_membership_from_content", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT, "aps": {"alert": {"loc-key": "USER_INVITE_TO_CHAT", "loc-args": ["Ground Control"]}}}))
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.member", "sender_display_name": "Ground Control",
     "membership": "join", "user_is_target": False, "counts": {"unread": 1}}
case("apns_14_member_event_not_an_invite_is_badge_only", "apns", n, apns({"aps": {"badge": 1}}))
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.sticker", "sender_display_name": "Major Tom"}
case("apns_15_other_event_type", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT, "aps": {"alert": {"loc-key": "MSG_FROM_USER", "loc-args": ["Major Tom"]}}}))
dp = {"aps": {"mutable-content": 1, "content-available": 1, "alert": {"loc-key": "SINGLE_UNREAD", "loc-args": []}}}
n = {"event_id": EVENT, "room_id": ROOM, "counts": {"unread": 2, "missed_calls": 1}}
case("apns_16_event_id_only_with_default_payload", "apns", n, apns({
    "aps": dp["aps"], "room_id": ROOM, "event_id": EVENT, "unread_count": 2, "missed_calls": 1}),
     device={"data": {"format": "event_id_only", "default_payload": dp}})
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.message", "counts": {"unread": 7}}
case("apns_17_event_id_only_format_wins_over_type_adds_empty_aps", "apns", n, apns({
    "aps": {}, "room_id": ROOM, "event_id": EVENT, "unread_count": 7}), device={"data": {"format": "event_id_only"}})
n = {"counts": {"unread": 4}}
case("apns_18_badge_only_ignores_default_payload", "apns", n, apns({"aps": {"badge": 4}}),
     device={"data": {"default_payload": dp}})
case("apns_19_nothing_to_send", "apns", {"room_id": ROOM}, {"skip": True})
n = dict(msg); n.pop("counts")
case("apns_20_default_payload_merged_into_alert", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT, "account": "@me:example.org",
    "aps": {"mutable-content": 1, "sound": "default",
            "alert": {"title": "Element", "loc-key": "MSG_FROM_USER_IN_ROOM_WITH_CONTENT",
                      "loc-args": ["Major Tom", "Mission Control", "I'm floating in a most peculiar way."]}}}),
     device={"data": {"default_payload": {"account": "@me:example.org", "aps": {"mutable-content": 1, "sound": "default", "alert": {"title": "Element"}}}}})
case("apns_21_default_payload_not_an_object_rejects", "apns", msg, {"reject": True}, device={"data": {"default_payload": "nope"}})
n = dict(msg); n["prio"] = "low"
case("apns_22_push_type_and_low_priority", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT,
    "aps": {"alert": {"loc-key": "MSG_FROM_USER_IN_ROOM_WITH_CONTENT",
                      "loc-args": ["Major Tom", "Mission Control", "I'm floating in a most peculiar way."]}, "badge": 3}},
    prio="5", push_type="alert"), options={"push_type": "alert"})
case("apns_23_hex_token_kept_without_conversion", "apns", {"counts": {"unread": 1}}, apns({"aps": {"badge": 1}}),
     options={"convert_device_token_to_hex": False}, device={"pushkey": HEX_TOKEN.upper()})
case("apns_24_hex_expected_but_not_hex_rejects", "apns", {"counts": {"unread": 1}}, {"reject": True},
     options={"convert_device_token_to_hex": False}, device={"pushkey": B64_TOKEN})
case("apns_25_not_base64_rejects", "apns", {"counts": {"unread": 1}}, {"reject": True}, device={"pushkey": "not base64!"})
n = dict(msg)
case("apns_26_send_badge_counts_off", "apns", n, apns({
    "room_id": ROOM, "event_id": EVENT,
    "aps": {"alert": {"loc-key": "MSG_FROM_USER_IN_ROOM_WITH_CONTENT",
                      "loc-args": ["Major Tom", "Mission Control", "I'm floating in a most peculiar way."]}}}),
     options={"send_badge_counts": False})

# Truncation: the fields are first cut to 1024 characters, then choppable strings shrink until the payload fits 4096 bytes.
long_from = "Ẓ" * 1500          # 3 bytes each, cut to 1024 characters first
long_room = "é" * 900           # 2 bytes each
long_body = "⚑" * 1024          # 3 bytes each
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.message", "sender_display_name": long_from, "room_name": long_room,
     "content": {"msgtype": "m.text", "body": long_body}, "counts": {"unread": 1}}
full = {"room_id": ROOM, "event_id": EVENT, "aps": {"alert": {"loc-key": "MSG_FROM_USER_IN_ROOM_WITH_CONTENT",
        "loc-args": [long_from[:1024], long_room, long_body]}, "badge": 1}}
paths = [["aps", "alert", "loc-args", 0], ["aps", "alert", "loc-args", 1], ["aps", "alert", "loc-args", 2]]
trimmed = naive_trim(full, 4096, paths)
assert size(trimmed) <= 4096 and size(trimmed) > 4090, size(trimmed)
case("apns_27_multibyte_truncation_to_4096_bytes", "apns", n, apns(trimmed))
emoji = "😀" * 1024               # 4 bytes each: the sender alone is 4096 bytes
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.message", "sender_display_name": emoji, "room_name": "R"}
full = {"room_id": ROOM, "event_id": EVENT, "aps": {"alert": {"loc-key": "MSG_FROM_USER_IN_ROOM", "loc-args": [emoji, "R"]}}}
trimmed = naive_trim(full, 4096, paths[:2])
case("apns_28_four_byte_characters_cut_whole", "apns", n, apns(trimmed))
n = {"event_id": EVENT, "room_id": ROOM}
case("apns_29_too_large_with_nothing_to_chop", "apns", n, {"tooLarge": True},
     device={"data": {"format": "event_id_only", "default_payload": {"blob": "x" * 5000}}})
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.message", "sender_display_name": "A\"B\\C\nD" * 400, "room_name": "R"}
full = {"room_id": ROOM, "event_id": EVENT, "aps": {"alert": {"loc-key": "MSG_FROM_USER_IN_ROOM", "loc-args": [("A\"B\\C\nD" * 400)[:1024], "R"]}}}
case("apns_30_escaped_characters_count_as_encoded", "apns", n, apns(naive_trim(full, 4096, paths[:2])))

# --- FCM --------------------------------------------------------------------------------------------------------
def fcm(data, priority="high", extra=None, token=FCM_TOKEN):
    m = {"token": token, "data": data, "android": {"priority": priority}}
    if extra:
        for k, v in extra.items():
            if k == "android":
                m["android"] = dict(v, priority=priority)
            else:
                m[k] = v
    return {"send": {"token": token, "message": m}}

case("fcm_01_message", "fcm", msg, fcm({
    "event_id": EVENT, "type": "m.room.message", "sender": "@major:example.org", "room_name": "Mission Control",
    "sender_display_name": "Major Tom", "room_id": ROOM, "content_msgtype": "m.text",
    "content_body": "I'm floating in a most peculiar way.", "prio": "high", "unread": "2", "missed_calls": "1"}))
n = dict(msg); n["prio"] = "low"; n.pop("counts")
case("fcm_02_low_priority_is_normal", "fcm", n, fcm({
    "event_id": EVENT, "type": "m.room.message", "sender": "@major:example.org", "room_name": "Mission Control",
    "sender_display_name": "Major Tom", "room_id": ROOM, "content_msgtype": "m.text",
    "content_body": "I'm floating in a most peculiar way.", "prio": "normal"}, priority="normal"))
case("fcm_03_absent_fields_are_left_out", "fcm", {"event_id": EVENT, "room_id": ROOM, "type": "m.room.encrypted", "sender": None},
     fcm({"event_id": EVENT, "room_id": ROOM, "type": "m.room.encrypted", "prio": "high"}))
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.message",
     "content": {"msgtype": "m.text", "body": "hi", "m.relates_to": {"rel_type": "m.thread"}, "n": 5, "ok": True, "gone": None}}
case("fcm_04_content_flattened_strings_only", "fcm", n, fcm({
    "event_id": EVENT, "room_id": ROOM, "type": "m.room.message", "content_msgtype": "m.text", "content_body": "hi", "prio": "high"}))
at_limit = "b" * 1024
straddle = "a" * 1019 + "⚑" + "c" * 10      # ⚑ occupies bytes 1019-1021: it cannot stay with room for "…"
over = "x" * 1025
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.message", "sender_display_name": over, "room_name": at_limit,
     "content": {"body": straddle, "msgtype": "m.text"}}
case("fcm_05_utf8_safe_truncation_at_1024_bytes", "fcm", n, fcm({
    "event_id": EVENT, "room_id": ROOM, "type": "m.room.message", "sender_display_name": "x" * 1021 + "…",
    "room_name": at_limit, "content_body": "a" * 1019 + "…", "content_msgtype": "m.text", "prio": "high"}))
n = {"event_id": EVENT, "room_id": ROOM, "sender_display_name": "é" * 600}
case("fcm_06_two_byte_characters_at_the_limit", "fcm", n, fcm({
    "event_id": EVENT, "room_id": ROOM, "sender_display_name": "é" * 510 + "…", "prio": "high"}))
case("fcm_07_default_payload_stringified", "fcm", {"event_id": EVENT, "room_id": ROOM}, fcm({
    "account": "@me:example.org", "n": "5", "o": "{\"a\":1}", "t": "true", "event_id": EVENT, "room_id": ROOM, "prio": "high"}),
     device={"data": {"default_payload": {"account": "@me:example.org", "n": 5, "o": {"a": 1}, "t": True, "z": None}}})
opts = {"apns": {"payload": {"aps": {"content-available": 1}}}, "android": {"ttl": "60s", "priority": "normal"}}
case("fcm_08_fcm_options_merged", "fcm", {"event_id": EVENT, "room_id": ROOM}, fcm(
    {"event_id": EVENT, "room_id": ROOM, "prio": "high"}, extra={"apns": opts["apns"], "android": {"ttl": "60s"}}),
     options={"fcm_options": opts})
case("fcm_09_badge_only_zero_count_is_sent", "fcm", {"counts": {"unread": 0}}, fcm({"unread": "0", "prio": "high"}))
case("fcm_10_badge_only_without_counts_is_not_sent", "fcm", {"room_id": ROOM, "type": "m.room.message"}, {"skip": True})
case("fcm_11_badge_only_with_counts_off_is_not_sent", "fcm", {"counts": {"unread": 3}}, {"skip": True},
     options={"send_badge_counts": False})
case("fcm_12_default_payload_not_an_object_rejects", "fcm", msg, {"reject": True}, device={"data": {"default_payload": [1]}})
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.member", "membership": "invite", "user_is_target": True,
     "sender_display_name": "Ground Control", "content": {"membership": "invite"}}
case("fcm_13_invite_membership_and_target", "fcm", n, fcm({
    "event_id": EVENT, "room_id": ROOM, "type": "m.room.member", "membership": "invite", "user_is_target": "true",
    "sender_display_name": "Ground Control", "content_membership": "invite", "prio": "high"}))

# --- WebPush ----------------------------------------------------------------------------------------------------
def wp(body, urgency="normal", topic=None):
    s = {"token": P256DH, "endpoint": ENDPOINT, "auth": AUTH, "urgency": urgency, "body": body}
    if topic:
        s["topic"] = topic
    return {"send": s}

n = copy.deepcopy(msg); n["content"]["formatted_body"] = "<b>I'm floating</b>"; n["content"]["format"] = "org.matrix.custom.html"
case("webpush_01_message", "webpush", n, wp({
    "room_id": ROOM, "room_name": "Mission Control", "event_id": EVENT, "sender": "@major:example.org",
    "sender_display_name": "Major Tom", "type": "m.room.message", "unread": 2, "missed_calls": 1,
    "content": {"msgtype": "m.text", "body": "I'm floating in a most peculiar way.", "format": "org.matrix.custom.html"}}))
topic = base64.urlsafe_b64encode(hashlib.blake2s(ROOM.encode(), digest_size=22).digest()).decode().rstrip("=")
assert len(topic) == 30
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.encrypted", "prio": "low"}
case("webpush_02_only_last_per_room_sets_topic", "webpush", n, wp({"room_id": ROOM, "event_id": EVENT, "type": "m.room.encrypted"},
     urgency="low", topic=topic), device={"data": {"only_last_per_room": True}})
case("webpush_03_events_only_drops_badge_updates", "webpush", {"counts": {"unread": 0}}, {"skip": True},
     device={"data": {"events_only": True}})
case("webpush_04_badge_update_sent_by_default", "webpush", {"counts": {"unread": 2}}, wp({"unread": 2}))
case("webpush_05_missing_auth_rejects", "webpush", msg, {"reject": True}, device={"data": {"auth": None}})
case("webpush_06_missing_endpoint_rejects", "webpush", msg, {"reject": True}, device={"data": {"endpoint": None}})
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.message",
     "content": {"msgtype": "m.text", "body": "β" * 1500, "ciphertext": "z" * 2001}}
case("webpush_07_long_body_cut_long_ciphertext_dropped", "webpush", n, wp({
    "room_id": ROOM, "event_id": EVENT, "type": "m.room.message", "content": {"msgtype": "m.text", "body": "β" * 999 + "…"}}))
case("webpush_08_default_payload_merged_under_fields", "webpush", {"event_id": EVENT, "room_id": ROOM}, wp({
    "account": "@me:example.org", "room_id": ROOM, "event_id": EVENT}),
     device={"data": {"default_payload": {"account": "@me:example.org", "room_id": "!stale:example.org"}}})
n = {"event_id": EVENT, "room_id": ROOM, "type": "m.room.message", "room_name": "", "sender_display_name": "😀" * 1000,
     "content": {"msgtype": "m.text", "body": "😀" * 1000}}
body = {"room_id": ROOM, "event_id": EVENT, "type": "m.room.message", "sender_display_name": "😀" * 1000,
        "content": {"msgtype": "m.text", "body": "😀" * 1000}}
trimmed = naive_trim(body, 4096 - 86 - 16 - 1, [["content", "body"], ["sender_display_name"], ["room_name"], ["room_alias"]])
case("webpush_09_trimmed_to_fit_one_record_empty_strings_left_out", "webpush", n, wp(trimmed))

os.makedirs(OUT, exist_ok=True)
for f in os.listdir(OUT):
    if f.endswith(".json"):
        os.remove(os.path.join(OUT, f))
for c in cases:
    with open(os.path.join(OUT, c["name"] + ".json"), "w", encoding="utf-8") as fh:
        json.dump(c, fh, ensure_ascii=False, indent=1, sort_keys=True)
        fh.write("\n")
print(f"wrote {len(cases)} cases to {os.path.normpath(OUT)}")
