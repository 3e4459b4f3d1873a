-- llm's logs.db, the documented legacy tables (docs/logging.md), by hand.
CREATE TABLE "conversations" ("id" TEXT PRIMARY KEY, "name" TEXT, "model" TEXT);
CREATE TABLE "schemas" ("id" TEXT PRIMARY KEY, "content" TEXT);
CREATE TABLE "responses" ("id" TEXT PRIMARY KEY, "model" TEXT, "prompt" TEXT, "system" TEXT, "prompt_json" TEXT,
  "options_json" TEXT, "response" TEXT, "response_json" TEXT,
  "conversation_id" TEXT REFERENCES "conversations"("id"), "duration_ms" INTEGER, "datetime_utc" TEXT,
  "input_tokens" INTEGER, "output_tokens" INTEGER, "token_details" TEXT, "schema_id" TEXT REFERENCES "schemas"("id"),
  "resolved_model" TEXT, "reasoning" TEXT);
CREATE VIRTUAL TABLE "responses_fts" USING FTS5 ("prompt", "response", content="responses");
CREATE TABLE "tools" ("id" INTEGER PRIMARY KEY, "hash" TEXT, "name" TEXT, "description" TEXT, "input_schema" TEXT,
  "plugin" TEXT);
CREATE TABLE "tool_responses" ("tool_id" INTEGER REFERENCES "tools"("id"),
  "response_id" TEXT REFERENCES "responses"("id"), PRIMARY KEY ("tool_id", "response_id"));
CREATE TABLE "tool_calls" ("id" INTEGER PRIMARY KEY, "response_id" TEXT REFERENCES "responses"("id"),
  "tool_id" INTEGER REFERENCES "tools"("id"), "name" TEXT, "arguments" TEXT, "tool_call_id" TEXT);
CREATE TABLE "tool_instances" ("id" INTEGER PRIMARY KEY, "plugin" TEXT, "name" TEXT, "arguments" TEXT);
CREATE TABLE "tool_results" ("id" INTEGER PRIMARY KEY, "response_id" TEXT REFERENCES "responses"("id"),
  "tool_id" INTEGER REFERENCES "tools"("id"), "name" TEXT, "output" TEXT, "tool_call_id" TEXT,
  "instance_id" INTEGER REFERENCES "tool_instances"("id"), "exception" TEXT);

INSERT INTO tools VALUES (1, 'h1', 'get_order', 'Fetch one order', '{"type":"object","properties":{"order_id":{"type":"string"}}}', NULL);
INSERT INTO tools VALUES (2, 'h2', 'create_ticket', 'Open a ticket', '{"type":"object"}', NULL);

INSERT INTO conversations VALUES ('01jq0000000000000000000001', 'Order A-1042', 'gpt-4.1-mini');
INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc)
  VALUES ('01jq00000000000000000000r1', 'gpt-4.1-mini', 'Where is order A-1042?', NULL, '', '01jq0000000000000000000001', '2026-11-22T08:00:00.000000');
INSERT INTO tool_calls VALUES (1, '01jq00000000000000000000r1', 1, 'get_order', '{"order_id": "A-1042"}', 'call_llm_1');
INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc)
  VALUES ('01jq00000000000000000000r2', 'gpt-4.1-mini', '', NULL, 'A-1042 is late; UPS has no scan for a week. Shall I open a ticket?', '01jq0000000000000000000001', '2026-11-22T08:00:02.000000');
INSERT INTO tool_results VALUES (1, '01jq00000000000000000000r2', 1, 'get_order', '{"order": {"order_id": "A-1042", "status": "late", "carrier": "UPS"}}', 'call_llm_1', NULL, NULL);
INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc)
  VALUES ('01jq00000000000000000000r3', 'gpt-4.1-mini', 'Yes, open one.', NULL, 'Opening it.', '01jq0000000000000000000001', '2026-11-22T08:01:00.000000');
INSERT INTO tool_calls VALUES (2, '01jq00000000000000000000r3', 2, 'create_ticket', '{"order_id": "A-1042", "subject": "Late", "body": "No scan for a week"}', 'call_llm_2');
INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc)
  VALUES ('01jq00000000000000000000r4', 'gpt-4.1-mini', '', NULL, 'The ticket service refused it.', '01jq0000000000000000000001', '2026-11-22T08:01:02.000000');
INSERT INTO tool_results VALUES (2, '01jq00000000000000000000r4', 2, 'create_ticket', NULL, 'call_llm_2', NULL, 'TimeoutError: ticket service did not answer');
INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc)
  VALUES ('01jq00000000000000000000r5', 'gpt-4.1-mini', 'Try once more.', NULL, '', '01jq0000000000000000000001', '2026-11-22T08:02:00.000000');
INSERT INTO tool_calls VALUES (3, '01jq00000000000000000000r5', 2, 'create_ticket', '{"order_id": "A-1042", "subject": "Late", "body": "No scan for a week"}', 'call_llm_3');

INSERT INTO conversations VALUES ('01jq0000000000000000000002', NULL, 'gpt-4.1-mini');
INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc)
  VALUES ('01jq00000000000000000000s1', 'gpt-4.1-mini', 'Say hello in French.', 'Be brief.', 'Bonjour.', '01jq0000000000000000000002', '2026-11-22T09:00:00.000000');
