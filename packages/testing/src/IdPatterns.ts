/** An RFC 9562 UUID version 7 as `uuidV7` prints it (lower-case hex, variant `10`), for tests that check ids. */
export const UUID_V7_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
