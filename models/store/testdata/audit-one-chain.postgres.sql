--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: audit_head; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit_head (
    id bigint NOT NULL,
    seq bigint NOT NULL,
    hash character varying(64) NOT NULL,
    at character varying(40) NOT NULL
);


--
-- Name: audits; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audits (
    id bigint NOT NULL,
    seq bigint,
    request_id character varying(40),
    version bigint NOT NULL,
    action character varying(32) NOT NULL,
    actor character varying(200) NOT NULL,
    via character varying(200),
    detail text,
    created_at timestamp with time zone NOT NULL,
    prev_hash character varying(64),
    hash character varying(64)
);


--
-- Name: audits_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.audits_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: audits_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.audits_id_seq OWNED BY public.audits.id;


--
-- Name: devices; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.devices (
    id character varying(40) NOT NULL,
    kind character varying(16) NOT NULL,
    token character varying(2048) NOT NULL,
    p256dh character varying(200),
    auth character varying(100),
    name character varying(100),
    operator_id character varying(40) NOT NULL,
    operator character varying(200) NOT NULL,
    operator_groups text,
    owned boolean DEFAULT false NOT NULL,
    created_at timestamp with time zone,
    updated_at timestamp with time zone,
    last_result character varying(200),
    last_at timestamp with time zone,
    retired_at timestamp with time zone
);


--
-- Name: forwards; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.forwards (
    id bigint NOT NULL,
    request_id character varying(40) NOT NULL,
    version bigint NOT NULL,
    runtime_id character varying(40) NOT NULL,
    seq bigint NOT NULL,
    decision character varying(64),
    answer text,
    note text,
    decided_at timestamp with time zone NOT NULL,
    decided_digest character varying(64) DEFAULT ''::character varying NOT NULL,
    decided_via character varying(200) DEFAULT ''::character varying NOT NULL,
    state character varying(16) NOT NULL,
    attempts bigint DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone NOT NULL,
    deadline timestamp with time zone NOT NULL,
    last_error character varying(500) DEFAULT ''::character varying NOT NULL,
    claimed_by character varying(64) DEFAULT ''::character varying NOT NULL,
    claimed_until timestamp with time zone,
    created_at timestamp with time zone,
    updated_at timestamp with time zone
);


--
-- Name: forwards_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.forwards_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: forwards_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.forwards_id_seq OWNED BY public.forwards.id;


--
-- Name: grants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.grants (
    owner_id character varying(40) NOT NULL,
    pending_id character varying(64) NOT NULL,
    digest character varying(64) NOT NULL,
    request_id character varying(40) NOT NULL,
    sandbox character varying(128) NOT NULL,
    policy character varying(128) NOT NULL,
    middleware character varying(128) NOT NULL,
    method character varying(32) NOT NULL,
    host character varying(255) NOT NULL,
    port bigint NOT NULL,
    path text NOT NULL,
    query text NOT NULL,
    body_sha256 character varying(64) NOT NULL,
    state character varying(16) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    claimed_at timestamp with time zone
);


--
-- Name: login_tickets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.login_tickets (
    hash character varying(64) NOT NULL,
    name character varying(100),
    created_at timestamp with time zone,
    expires_at timestamp with time zone,
    used_at timestamp with time zone
);


--
-- Name: push_claims; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.push_claims (
    request_id character varying(40) NOT NULL,
    type character varying(16) NOT NULL,
    created_at timestamp with time zone
);


--
-- Name: requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.requests (
    id character varying(40) NOT NULL,
    kind character varying(16) NOT NULL,
    status character varying(16) NOT NULL,
    version bigint NOT NULL,
    title text NOT NULL,
    summary text,
    detail text,
    risk character varying(8),
    tool character varying(128),
    command text,
    options text,
    allow_answer boolean DEFAULT false NOT NULL,
    default_option character varying(64),
    decision character varying(64),
    answer text,
    note text,
    source character varying(16),
    source_ref text,
    runtime_id character varying(40),
    pending_id character varying(64),
    owner_id character varying(40) NOT NULL,
    idempotency_key character varying(200),
    filing_digest character varying(64) DEFAULT ''::character varying NOT NULL,
    created_by character varying(200) NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    resolved_at timestamp with time zone,
    decided_by character varying(200),
    decided_via character varying(200),
    actuation_state character varying(16) DEFAULT 'none'::character varying NOT NULL,
    attempts bigint DEFAULT 0 NOT NULL,
    hold_rule character varying(100),
    hold_until timestamp with time zone,
    hold_then character varying(64),
    hold_effect character varying(16),
    sealed boolean DEFAULT false NOT NULL,
    edited_at timestamp with time zone,
    decided_digest character varying(64),
    approvers text,
    votes text,
    filed_for character varying(100)
);


--
-- Name: runtimes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runtimes (
    id character varying(40) NOT NULL,
    owner_id character varying(40) NOT NULL,
    name character varying(100) NOT NULL,
    machine character varying(200) NOT NULL,
    callback_url character varying(2000) DEFAULT ''::character varying NOT NULL,
    created_at timestamp with time zone,
    updated_at timestamp with time zone,
    last_seen_at timestamp with time zone,
    seq bigint DEFAULT 0 NOT NULL,
    last_result character varying(200) DEFAULT ''::character varying NOT NULL,
    last_result_at timestamp with time zone,
    failures bigint DEFAULT 0 NOT NULL
);


--
-- Name: server_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.server_keys (
    id character varying(40) NOT NULL,
    seed bytea NOT NULL,
    public bytea NOT NULL,
    created_at timestamp with time zone
);


--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    hash character varying(64) NOT NULL,
    id character varying(40),
    token_id character varying(40),
    name character varying(100) NOT NULL,
    groups text,
    csrf character varying(64) NOT NULL,
    user_agent character varying(200),
    created_at timestamp with time zone,
    last_seen_at timestamp with time zone,
    expires_at timestamp with time zone
);


--
-- Name: settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.settings (
    name character varying(64) NOT NULL,
    value text NOT NULL,
    created_at timestamp with time zone
);


--
-- Name: tokens; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tokens (
    id character varying(40) NOT NULL,
    name character varying(100) NOT NULL,
    role character varying(16) NOT NULL,
    hash character varying(64) NOT NULL,
    groups text,
    "for" character varying(100),
    created_at timestamp with time zone,
    last_used timestamp with time zone,
    revoked_at timestamp with time zone
);


--
-- Name: audits id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audits ALTER COLUMN id SET DEFAULT nextval('public.audits_id_seq'::regclass);


--
-- Name: forwards id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.forwards ALTER COLUMN id SET DEFAULT nextval('public.forwards_id_seq'::regclass);


--
-- Data for Name: audit_head; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.audit_head VALUES (1, 10, '49424ce0a617f94438d960731a443f2dc3bee377096ef2cd6a23d0cc698d741e', '2026-12-03T18:09:15.750377Z');


--
-- Data for Name: audits; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.audits VALUES (1, 1, 'req_330078d77231b5a4bf667f61', 1, 'create', 'agent:a', 'api', '', '2026-12-03 18:09:15.674713+00', '0000000000000000000000000000000000000000000000000000000000000000', '9d363fd39f661321c765c170e880f01aef9c59a78653662e015789cbaeb32b04');
INSERT INTO public.audits VALUES (2, 2, 'req_330078d77231b5a4bf667f61', 2, 'decide', 'operator:o', 'api', '{"decision":"once"}', '2026-12-03 18:09:15.688762+00', '9d363fd39f661321c765c170e880f01aef9c59a78653662e015789cbaeb32b04', '5e6742911025bcc5827b163ada3087d765b998ee71afc4419764504b70a11707');
INSERT INTO public.audits VALUES (3, 3, 'req_52ec31aa5198cebf6afb2d15', 1, 'create', 'agent:a', 'api', '', '2026-12-03 18:09:15.699087+00', '5e6742911025bcc5827b163ada3087d765b998ee71afc4419764504b70a11707', 'a4a4fc3d8e9ead3eae19265fbdffbabca24014ea0dc7a6dedc5ec7942d9ffa66');
INSERT INTO public.audits VALUES (4, 4, 'req_c9c3bdbbf173911090c06448', 1, 'create', 'agent:a', 'api', '', '2026-12-03 18:09:15.703628+00', 'a4a4fc3d8e9ead3eae19265fbdffbabca24014ea0dc7a6dedc5ec7942d9ffa66', '1f4d56102492066393638fedd08f7fd6017b96c873e53353ad636e37a029e472');
INSERT INTO public.audits VALUES (5, 5, 'req_c9c3bdbbf173911090c06448', 2, 'decide', 'operator:o', 'api', '{"decision":"once"}', '2026-12-03 18:09:15.70692+00', '1f4d56102492066393638fedd08f7fd6017b96c873e53353ad636e37a029e472', '514d37d232c438a256844bf04e7e8af5a36df7a1f7ec804cd807ff5df2eb9800');
INSERT INTO public.audits VALUES (6, 6, 'req_36cc8aba9db22d4bc7d06dd3', 1, 'create', 'agent:a', 'api', '', '2026-12-03 18:09:15.714814+00', '514d37d232c438a256844bf04e7e8af5a36df7a1f7ec804cd807ff5df2eb9800', '98d75fdb398ec6298e101040b6808e04ece0c2392a826fa078c9eb37dd361b60');
INSERT INTO public.audits VALUES (7, 7, 'req_e02a8c62de82516526df9764', 1, 'create', 'agent:a', 'api', '', '2026-12-03 18:09:15.722591+00', '98d75fdb398ec6298e101040b6808e04ece0c2392a826fa078c9eb37dd361b60', '12cad191f9949b20e98a5244a2a0a4ada6a84ff1826e27242847bac9e6bc37f0');
INSERT INTO public.audits VALUES (8, 8, 'req_e02a8c62de82516526df9764', 2, 'decide', 'operator:o', 'api', '{"decision":"once"}', '2026-12-03 18:09:15.730396+00', '12cad191f9949b20e98a5244a2a0a4ada6a84ff1826e27242847bac9e6bc37f0', 'f18b3eb65a0bad6e0227c0a7493e9fae4af138e068d72107b56feece12f6ae45');
INSERT INTO public.audits VALUES (9, 9, 'req_0a70c3137de6ae290f4f599e', 1, 'create', 'agent:a', 'api', '', '2026-12-03 18:09:15.737658+00', 'f18b3eb65a0bad6e0227c0a7493e9fae4af138e068d72107b56feece12f6ae45', '086946c6bc582fd78dd4cb57aee5032155eb27c59bebb0f83b74aca119f09405');
INSERT INTO public.audits VALUES (10, 10, '', 0, 'token_create', 'cli', 'cli', '{"name":"fixture-op","role":"operator","token_id":"tok_1b398a9a7b45e12a155dfa8e"}', '2026-12-03 18:09:15.750377+00', '086946c6bc582fd78dd4cb57aee5032155eb27c59bebb0f83b74aca119f09405', '49424ce0a617f94438d960731a443f2dc3bee377096ef2cd6a23d0cc698d741e');


--
-- Data for Name: devices; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: forwards; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: grants; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: login_tickets; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: push_claims; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: requests; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.requests VALUES ('req_330078d77231b5a4bf667f61', 'permission', 'resolved', 2, 'fixture', '', '', '', '', '', '[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]', false, '', 'once', NULL, NULL, 'session', NULL, NULL, NULL, 'tok_a', NULL, '', 'agent:a', '2026-12-03 18:09:15.671149+00', '2026-12-03 18:09:15.687432+00', '2026-12-03 19:09:15.671149+00', '2026-12-03 18:09:15.687432+00', 'operator:o', 'api', 'none', 0, NULL, NULL, NULL, NULL, true, NULL, '2cb9978620e1d562343aa913f1ddf0fbfcdac53489cb93d18666a7cc9563c316', NULL, NULL, '');
INSERT INTO public.requests VALUES ('req_52ec31aa5198cebf6afb2d15', 'permission', 'open', 1, 'fixture', '', '', '', '', '', '[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]', false, '', NULL, NULL, NULL, 'session', NULL, NULL, NULL, 'tok_a', NULL, '', 'agent:a', '2026-12-03 18:09:15.698076+00', '2026-12-03 18:09:15.698076+00', '2026-12-03 19:09:15.698076+00', NULL, NULL, NULL, 'none', 0, NULL, NULL, NULL, NULL, true, NULL, NULL, NULL, NULL, '');
INSERT INTO public.requests VALUES ('req_c9c3bdbbf173911090c06448', 'permission', 'resolved', 2, 'fixture', '', '', '', '', '', '[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]', false, '', 'once', NULL, NULL, 'session', NULL, NULL, NULL, 'tok_a', NULL, '', 'agent:a', '2026-12-03 18:09:15.701967+00', '2026-12-03 18:09:15.706293+00', '2026-12-03 19:09:15.701967+00', '2026-12-03 18:09:15.706293+00', 'operator:o', 'api', 'none', 0, NULL, NULL, NULL, NULL, true, NULL, '2cb9978620e1d562343aa913f1ddf0fbfcdac53489cb93d18666a7cc9563c316', NULL, NULL, '');
INSERT INTO public.requests VALUES ('req_36cc8aba9db22d4bc7d06dd3', 'permission', 'open', 1, 'fixture', '', '', '', '', '', '[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]', false, '', NULL, NULL, NULL, 'session', NULL, NULL, NULL, 'tok_a', NULL, '', 'agent:a', '2026-12-03 18:09:15.713898+00', '2026-12-03 18:09:15.713898+00', '2026-12-03 19:09:15.713898+00', NULL, NULL, NULL, 'none', 0, NULL, NULL, NULL, NULL, true, NULL, NULL, NULL, NULL, '');
INSERT INTO public.requests VALUES ('req_e02a8c62de82516526df9764', 'permission', 'resolved', 2, 'fixture', '', '', '', '', '', '[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]', false, '', 'once', NULL, NULL, 'session', NULL, NULL, NULL, 'tok_a', NULL, '', 'agent:a', '2026-12-03 18:09:15.721814+00', '2026-12-03 18:09:15.72959+00', '2026-12-03 19:09:15.721814+00', '2026-12-03 18:09:15.72959+00', 'operator:o', 'api', 'none', 0, NULL, NULL, NULL, NULL, true, NULL, '2cb9978620e1d562343aa913f1ddf0fbfcdac53489cb93d18666a7cc9563c316', NULL, NULL, '');
INSERT INTO public.requests VALUES ('req_0a70c3137de6ae290f4f599e', 'permission', 'open', 1, 'fixture', '', '', '', '', '', '[{"id":"once","label":"Allow once","effect":"allow"},{"id":"deny","label":"Deny","effect":"deny"}]', false, '', NULL, NULL, NULL, 'session', NULL, NULL, NULL, 'tok_a', NULL, '', 'agent:a', '2026-12-03 18:09:15.736683+00', '2026-12-03 18:09:15.736683+00', '2026-12-03 19:09:15.736683+00', NULL, NULL, NULL, 'none', 0, NULL, NULL, NULL, NULL, true, NULL, NULL, NULL, NULL, '');


--
-- Data for Name: runtimes; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: server_keys; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.server_keys VALUES ('key_6cae9b9257d9cb3444bacc19', '\x447366168a5545ae2b39a953bcde91bbd7fef7c0be7769c86022b0a57129585d', '\x707efe3daae1b802782827a9ea304723efb22df6a47e42f133cbc3e126b5e562', '2026-12-03 18:09:15.755852+00');


--
-- Data for Name: sessions; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: settings; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: tokens; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.tokens VALUES ('tok_1b398a9a7b45e12a155dfa8e', 'fixture-op', 'operator', '558bc92902653663a42544a1563ab70a73e16be98b849437f582bedfd5366326', NULL, '', '2026-12-03 18:09:15.745759+00', NULL, NULL);


--
-- Name: audits_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.audits_id_seq', 10, true);


--
-- Name: forwards_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.forwards_id_seq', 1, false);


--
-- Name: audit_head audit_head_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit_head
    ADD CONSTRAINT audit_head_pkey PRIMARY KEY (id);


--
-- Name: audits audits_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audits
    ADD CONSTRAINT audits_pkey PRIMARY KEY (id);


--
-- Name: devices devices_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.devices
    ADD CONSTRAINT devices_pkey PRIMARY KEY (id);


--
-- Name: forwards forwards_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.forwards
    ADD CONSTRAINT forwards_pkey PRIMARY KEY (id);


--
-- Name: grants grants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.grants
    ADD CONSTRAINT grants_pkey PRIMARY KEY (owner_id, pending_id);


--
-- Name: login_tickets login_tickets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.login_tickets
    ADD CONSTRAINT login_tickets_pkey PRIMARY KEY (hash);


--
-- Name: push_claims push_claims_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push_claims
    ADD CONSTRAINT push_claims_pkey PRIMARY KEY (request_id, type);


--
-- Name: requests requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.requests
    ADD CONSTRAINT requests_pkey PRIMARY KEY (id);


--
-- Name: runtimes runtimes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runtimes
    ADD CONSTRAINT runtimes_pkey PRIMARY KEY (id);


--
-- Name: server_keys server_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.server_keys
    ADD CONSTRAINT server_keys_pkey PRIMARY KEY (id);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (hash);


--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (name);


--
-- Name: tokens tokens_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tokens
    ADD CONSTRAINT tokens_pkey PRIMARY KEY (id);


--
-- Name: idx_audits_request_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_audits_request_id ON public.audits USING btree (request_id);


--
-- Name: idx_audits_seq; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_audits_seq ON public.audits USING btree (seq);


--
-- Name: idx_devices_retired_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_devices_retired_at ON public.devices USING btree (retired_at);


--
-- Name: idx_devices_token; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_devices_token ON public.devices USING btree (token);


--
-- Name: idx_forwards_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_forwards_due ON public.forwards USING btree (state, next_attempt_at);


--
-- Name: idx_forwards_request_version; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_forwards_request_version ON public.forwards USING btree (request_id, version);


--
-- Name: idx_forwards_runtime_seq; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_forwards_runtime_seq ON public.forwards USING btree (runtime_id, seq);


--
-- Name: idx_grants_digest; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_grants_digest ON public.grants USING btree (digest, owner_id);


--
-- Name: idx_grants_request_id; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_grants_request_id ON public.grants USING btree (request_id);


--
-- Name: idx_requests_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_requests_created_at ON public.requests USING btree (created_at);


--
-- Name: idx_requests_hold_set; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_requests_hold_set ON public.requests USING btree (hold_until) WHERE (hold_until IS NOT NULL);


--
-- Name: idx_requests_idem_set; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_requests_idem_set ON public.requests USING btree (owner_id, idempotency_key) WHERE (idempotency_key IS NOT NULL);


--
-- Name: idx_requests_owner_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_requests_owner_id ON public.requests USING btree (owner_id);


--
-- Name: idx_requests_owner_pending_set; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_requests_owner_pending_set ON public.requests USING btree (owner_id, pending_id) WHERE (pending_id IS NOT NULL);


--
-- Name: idx_requests_runtime_set; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_requests_runtime_set ON public.requests USING btree (runtime_id) WHERE (runtime_id IS NOT NULL);


--
-- Name: idx_requests_status_expires; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_requests_status_expires ON public.requests USING btree (status, expires_at);


--
-- Name: idx_runtimes_owner_name; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_runtimes_owner_name ON public.runtimes USING btree (owner_id, name);


--
-- Name: idx_sessions_expires_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_sessions_expires_at ON public.sessions USING btree (expires_at);


--
-- Name: idx_sessions_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX idx_sessions_id ON public.sessions USING btree (id);


--
-- Name: idx_tokens_hash; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX idx_tokens_hash ON public.tokens USING btree (hash);


--
-- PostgreSQL database dump complete
--


