//! `authority.jsonl`: bounded-authority and scheduler scenarios as data. Each line is one
//! scenario on one subject (`ExecutionLease`, `BudgetLedger`, `DelegationAuthority`,
//! `Scheduler`): a list of steps `{call, args, ok | error}` where `call` is a method name of
//! the JSON call surface (`core/ffi`, camelCase, times in Unix milliseconds) and `new` (with a
//! `mode`) replaces the subject when it succeeds. Every step is one vector.
//!
//! The steps run through `core/ffi`'s handles because that is the one place where the core's
//! errors already carry a reason slug and structured fields (account, dimension, field, state,
//! path, generations) as data; bindings then read the same steps through their public API. An
//! error records every member of that envelope except the binding-facing ones (`class`,
//! `detail`, `stage`, `wireMessage`), so the lead's self-describing error trait changes this
//! file by one regeneration.

use std::collections::BTreeMap;

use missionweaveprotocol::json::{Value, canonical_bytes, parse_state};
use missionweaveprotocol_ffi::authority::{
    AuthorityHandle, LeaseHandle, LedgerHandle, RetryHandle,
};
use missionweaveprotocol_ffi::finish;
use missionweaveprotocol_ffi::scheduling::SchedulerHandle;

use super::Rec;

const T0: i64 = 1_700_000_000_000;

/// Envelope members that are presentation, not vector content.
const PRESENTATION: [&str; 4] = ["class", "detail", "stage", "wireMessage"];

/// `base` (a JSON object text) with the members of `extra` (another, or empty) set over it;
/// an `extra` member `null` removes the member (the JSON surface reads absent and `null` alike).
fn merged(base: &str, extra: &str) -> Value {
    let mut value = j(base);
    if let (Value::Object(o), Value::Object(e)) =
        (&mut value, j(if extra.is_empty() { "{}" } else { extra }))
    {
        for (name, member) in e.iter() {
            let name = name.to_lossy();
            o.remove(&name);
            if !matches!(member, Value::Null) {
                o.insert(&name, member.clone());
            }
        }
    }
    value
}

/// JSON text with `T0`, `T0+N` and `T0-N` standing for Unix milliseconds around [`T0`].
fn j(text: &str) -> Value {
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(at) = rest.find("T0") {
        out.push_str(&rest[..at]);
        rest = &rest[at + 2..];
        let sign = match rest.as_bytes().first() {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => 0,
        };
        let digits = if sign == 0 {
            0
        } else {
            rest[1..].bytes().take_while(u8::is_ascii_digit).count()
        };
        let offset: i64 = if digits == 0 {
            0
        } else {
            rest[1..=digits].parse().unwrap_or(0)
        };
        if digits > 0 {
            rest = &rest[1 + digits..];
        }
        out.push_str(&(T0 + sign * offset).to_string());
    }
    out.push_str(rest);
    parse_state(out.as_bytes())
        .unwrap_or_else(|_| Value::string(format!("bad scenario JSON: {text}")))
}

fn text(value: &Value) -> String {
    String::from_utf8_lossy(&canonical_bytes(value).unwrap_or_default()).into_owned()
}

enum Handle {
    None,
    Lease(Box<LeaseHandle>),
    Ledger(Box<LedgerHandle>),
    Authority(Box<AuthorityHandle>),
    Retry(Box<RetryHandle>),
    Scheduler(Box<SchedulerHandle>),
}

/// One scenario being recorded.
struct Script {
    area: &'static str,
    name: &'static str,
    subject: &'static str,
    handle: Handle,
    steps: Vec<Value>,
}

/// The step record for an envelope (`{"ok": …}` or `{"error": {…}}`).
fn outcome(step: Rec, envelope: &str) -> Value {
    let envelope = parse_state(envelope.as_bytes()).unwrap_or(Value::Null);
    if let Some(ok) = envelope.get("ok") {
        return step.value("ok", ok.clone()).build();
    }
    let mut error = Rec::new();
    if let Some(members) = envelope.get("error").and_then(Value::as_object) {
        for (name, value) in members.iter() {
            let name = name.to_lossy();
            if !PRESENTATION.contains(&name.as_ref()) {
                error = error.value(&name, value.clone());
            }
        }
    }
    step.value("error", error.build()).build()
}

impl Script {
    fn new(area: &'static str, name: &'static str, subject: &'static str) -> Self {
        Self {
            area,
            name,
            subject,
            handle: Handle::None,
            steps: Vec::new(),
        }
    }

    /// Constructs the subject (`mode` as the JSON surface names it); on success it replaces the
    /// previous subject and the step's `ok` is its observable state (`null` where it has none).
    fn create(&mut self, mode: &str, args: Value) -> &mut Self {
        let json = text(&args);
        let step = Rec::new()
            .str("call", "new")
            .str("mode", mode)
            .value("args", args);
        let made: Result<(Handle, Value), String> = match (self.subject, mode) {
            ("ExecutionLease", _) => {
                let lease = match mode {
                    "execution" => LeaseHandle::execution(&json),
                    "ownership" => LeaseHandle::ownership(&json),
                    "blocked" => LeaseHandle::blocked(&json),
                    "coordinator" => LeaseHandle::coordinator(&json),
                    _ => LeaseHandle::from_document(&json),
                };
                lease.map_err(|f| finish(Err(f))).and_then(|h| {
                    let state = ok_of(&h.state())?;
                    Ok((Handle::Lease(Box::new(h)), state))
                })
            }
            ("BudgetLedger", "rebuild") => LedgerHandle::rebuild(&json)
                .map(|h| (Handle::Ledger(Box::new(h)), Value::Null))
                .map_err(|f| finish(Err(f))),
            ("BudgetLedger", _) => Ok((Handle::Ledger(Box::default()), Value::Null)),
            ("DelegationAuthority", _) => AuthorityHandle::new(&json)
                .map(|h| (Handle::Authority(Box::new(h)), Value::Null))
                .map_err(|f| finish(Err(f))),
            ("RetryController", "restore") => RetryHandle::restore(&json)
                .map(|h| (Handle::Retry(Box::new(h)), Value::Null))
                .map_err(|f| finish(Err(f))),
            ("RetryController", _) => RetryHandle::new(&json)
                .map(|h| (Handle::Retry(Box::new(h)), Value::Null))
                .map_err(|f| finish(Err(f))),
            (_, "restore") => SchedulerHandle::restore(&json)
                .map(|h| (Handle::Scheduler(Box::new(h)), Value::Null))
                .map_err(|f| finish(Err(f))),
            (_, "rebuild") => SchedulerHandle::rebuild(&json)
                .map(|h| (Handle::Scheduler(Box::new(h)), Value::Null))
                .map_err(|f| finish(Err(f))),
            _ => SchedulerHandle::new(&json)
                .map(|h| (Handle::Scheduler(Box::new(h)), Value::Null))
                .map_err(|f| finish(Err(f))),
        };
        let envelope = match made {
            Ok((handle, state)) => {
                self.handle = handle;
                finish(Ok(state))
            }
            Err(envelope) => envelope,
        };
        self.steps.push(outcome(step, &envelope));
        self
    }

    /// Calls `method` on the subject.
    fn call(&mut self, method: &str, args: Value) -> &mut Self {
        let json = text(&args);
        let step = Rec::new().str("call", method).value("args", args.clone());
        let envelope = match &mut self.handle {
            Handle::Lease(h) => lease_call(h, method, &json),
            Handle::Ledger(h) => ledger_call(h, method, &json),
            Handle::Authority(h) => delegation_call(h, method, &json),
            Handle::Retry(h) => retry_call(h, method, &json),
            Handle::Scheduler(h) => scheduler_call(h, method, &args, &json),
            Handle::None => finish(Ok(Value::string("no subject"))),
        };
        self.steps.push(outcome(step, &envelope));
        self
    }

    fn build(&self) -> Value {
        Rec::new()
            .str("area", self.area)
            .str("scenario", self.name)
            .str("subject", self.subject)
            .value("steps", Value::Array(self.steps.clone()))
            .build()
    }
}

/// The `ok` member of an envelope, or the envelope itself as the error.
fn ok_of(envelope: &str) -> Result<Value, String> {
    parse_state(envelope.as_bytes())
        .ok()
        .and_then(|e| e.get("ok").cloned())
        .ok_or_else(|| envelope.to_owned())
}

/// A step naming no operation of its subject (a scenario bug, visible in the file).
fn unknown(method: &str) -> String {
    finish(Ok(Value::string(format!("no operation {method}"))))
}

// The vector files name each step's operation (`call`) as data; these tables map a name to
// the typed operation of `core/ffi`, as each binding's public API does for its own steps.

fn lease_call(h: &mut LeaseHandle, method: &str, json: &str) -> String {
    match method {
        "state" => h.state(),
        "stateAt" => h.state_at(json),
        "isLive" => h.is_live(json),
        "renew" => h.renew(json),
        "close" => h.close(json),
        "checkClaim" => h.check_claim(json),
        "checkStartBy" => h.check_start_by(json),
        "toJSON" => h.to_json(),
        other => unknown(other),
    }
}

fn ledger_call(h: &mut LedgerHandle, method: &str, json: &str) -> String {
    match method {
        "registerMission" => h.register_mission(json),
        "registerWorkItem" => h.register_work_item(json),
        "consume" => h.consume(json),
        "remaining" => h.remaining(json),
        "usage" => h.usage(json),
        "limit" => h.limit(json),
        "reserved" => h.reserved(json),
        "currency" => h.currency(json),
        "depth" => h.depth(json),
        "size" => h.size(),
        "snapshot" => h.snapshot(),
        other => unknown(other),
    }
}

fn delegation_call(h: &mut AuthorityHandle, method: &str, json: &str) -> String {
    match method {
        "grant" => h.grant(),
        "charged" => h.charged(),
        "remaining" => h.remaining(),
        "invalidated" => h.invalidated(),
        "checkUse" => h.check_use(json),
        "authorizeExisting" => h.authorize_existing(json),
        "authorizeDescendant" => h.authorize_descendant(json),
        "restoreAttribution" => h.restore_attribution(json),
        other => unknown(other),
    }
}

fn retry_call(h: &mut RetryHandle, method: &str, json: &str) -> String {
    match method {
        "state" => h.state(),
        "idempotencyKey" => h.idempotency_key(json),
        "begin" => h.begin(json),
        "finish" => h.finish(json),
        "consume" => h.consume(json),
        "snapshot" => h.snapshot(),
        "currentAttempt" => h.current_attempt(),
        other => unknown(other),
    }
}

fn scheduler_call(h: &mut SchedulerHandle, method: &str, args: &Value, json: &str) -> String {
    let number = |index: usize| {
        args.as_array()
            .and_then(|a| a.get(index))
            .and_then(Value::as_number)
            .map_or(f64::NAN, |n| n.as_f64())
    };
    match method {
        "schedule" => h.schedule(number(0)),
        "apply" => {
            let work_id = args
                .as_array()
                .and_then(|a| a.first())
                .and_then(Value::as_str)
                .unwrap_or_default();
            let transition = args
                .as_array()
                .and_then(|a| a.get(1))
                .map(text)
                .unwrap_or_default();
            h.apply(work_id, &transition, number(2))
        }
        "admit" => h.admit(json),
        "admitMany" => h.admit_many(json),
        "unblock" => h.unblock(json),
        "cancel" => h.cancel(json),
        "reprioritize" => h.reprioritize(json),
        "setCapacity" => h.set_capacity(json),
        "setGroupPolicy" => h.set_group_policy(json),
        "state" => h.state(json),
        "generation" => h.generation(json),
        "isTerminal" => h.is_terminal(json),
        "forget" => h.forget(json),
        "disclose" => h.disclose(json),
        "stats" => h.stats(),
        "snapshot" => h.snapshot(),
        other => unknown(other),
    }
}

/// Every scenario, and the number of step vectors per area.
pub(super) fn records() -> (Vec<Value>, BTreeMap<String, usize>) {
    let scripts = [
        lease_execution(),
        lease_rules(),
        lease_lapsed(),
        lease_other_types(),
        lease_document(),
        budget_ledger(),
        budget_rebuild(),
        delegation_authorized(),
        delegation_violations(),
        delegation_invalidating(),
        retry_bounded(),
        retry_endings(),
        scheduler_admission(),
        scheduler_errors(),
    ];
    let mut areas = BTreeMap::new();
    for s in &scripts {
        *areas.entry(s.area.to_owned()).or_insert(0) += s.steps.len();
    }
    (scripts.iter().map(Script::build).collect(), areas)
}

// ---- leases (§11) ---------------------------------------------------------------------------

const LEASE: &str = r#"{"leaseId":"urn:lease:1","missionId":"urn:mission:1","groupId":"urn:group:1","workItemId":"urn:work:1","holderAgentId":"urn:agent:1","sessionEpoch":3,"ownershipEpoch":7,"issuedAt":T0,"startsAt":T0+1000,"expiresAt":T0+60000}"#;
const CLAIM: &str =
    r#"{"agentId":"urn:agent:1","leaseId":"urn:lease:1","sessionEpoch":3,"ownershipEpoch":7}"#;

/// `[{…LEASE, …extra}]`.
fn lease_args(extra: &str) -> Value {
    Value::Array(vec![merged(LEASE, extra)])
}

fn claim_args(extra: &str, now: &str) -> Value {
    Value::Array(vec![merged(CLAIM, extra), j(now)])
}

fn lease_execution() -> Script {
    let mut s = Script::new("lease", "lease.execution", "ExecutionLease");
    s.create("execution", lease_args(""))
        .call("stateAt", j("[T0+60000]"))
        .call("isLive", j("[T0+500]"))
        .call("isLive", j("[T0+1000]"))
        .call("renew", j("[T0+30000,T0+90000]"))
        .call("close", j(r#"["released",T0+45000,"checkpoint"]"#))
        .call("close", j(r#"["released",T0+45000,"checkpoint"]"#))
        .call("toJSON", j("[]"));
    s
}

fn lease_rules() -> Script {
    let mut s = Script::new("lease", "lease.rules", "ExecutionLease");
    s.create("execution", lease_args(r#"{"expiresAt":T0}"#))
        .create("execution", lease_args(r#"{"sessionEpoch":0}"#))
        .create("execution", lease_args(r#"{"leaseId":"has space"}"#))
        .create("execution", lease_args(""))
        .call("renew", j("[T0+60000,T0+90000]"))
        .call("renew", j("[T0+2000,T0+50000]"))
        .call("renew", j("[T0+2000,T0+70000]"))
        .call("renew", j("[T0+2000,T0+80000]"))
        .call("checkClaim", claim_args("", "T0+3000"))
        .call(
            "checkClaim",
            claim_args(r#"{"agentId":"urn:agent:2"}"#, "T0+3000"),
        )
        .call("checkClaim", claim_args(r#"{"sessionEpoch":2}"#, "T0+3000"))
        .call(
            "checkClaim",
            claim_args(r#"{"ownershipEpoch":6}"#, "T0+3000"),
        )
        .call(
            "checkClaim",
            claim_args(r#"{"leaseId":"urn:lease:0"}"#, "T0+3000"),
        )
        .call("checkClaim", claim_args("", "T0+70000"))
        .call("close", j(r#"["expired",T0+10000,"timeout"]"#))
        .call("close", j(r#"["revoked",T0+10000,"reassigned"]"#))
        .call("close", j(r#"["revoked",T0+10000,"reassigned"]"#))
        .call("close", j(r#"["released",T0+10000,"checkpoint"]"#))
        .call("checkClaim", claim_args("", "T0+11000"))
        .call("renew", j("[T0+11000,T0+99000]"))
        .call("state", j("[]"));
    s
}

fn lease_lapsed() -> Script {
    let mut s = Script::new("lease", "lease.lapsed", "ExecutionLease");
    s.create("execution", lease_args(""))
        .call("stateAt", j("[T0+59999]"))
        .call("close", j(r#"["released",T0+60000,"late"]"#))
        .call("close", j(r#"["expired",T0+60000,"timeout"]"#))
        .call("close", j(r#"["active",T0+61000,"x"]"#))
        .call("isLive", j("[T0+30000]"));
    s
}

fn lease_other_types() -> Script {
    let mut s = Script::new(
        "lease",
        "lease.ownership-blocked-coordinator",
        "ExecutionLease",
    );
    s.create("ownership", lease_args(r#"{"startBy":T0+61000}"#))
        .create("ownership", lease_args(r#"{"startBy":T0+5000}"#))
        .call("checkStartBy", j("[T0+5000]"))
        .call("checkStartBy", j("[T0+5001]"))
        .create("blocked", lease_args(r#"{"graceExpiresAt":T0+100000}"#))
        .call("renew", j("[T0+2000,T0+100000]"))
        .call("renew", j("[T0+3000,T0+100001]"))
        .create(
            "coordinator",
            j(r#"[{"leaseId":"urn:lease:1","missionId":"urn:mission:1","groupId":"urn:group:1","holderAgentId":"urn:agent:1","sessionEpoch":3,"coordinatorEpoch":5,"issuedAt":T0,"startsAt":T0+1000,"expiresAt":T0+60000}]"#),
        )
        .call(
            "checkClaim",
            j(r#"[{"agentId":"urn:agent:1","leaseId":"urn:lease:1","sessionEpoch":3,"coordinatorEpoch":4},T0+2000]"#),
        )
        .call(
            "checkClaim",
            j(r#"[{"agentId":"urn:agent:1","leaseId":"urn:lease:1","sessionEpoch":3,"coordinatorEpoch":5},T0+2000]"#),
        )
        .call("toJSON", j("[]"));
    s
}

/// Lease documents (`lease.schema.json`) read back through the core: the document of
/// `lease.execution`, then the same with a state outside the schema, and with `expired` (a
/// closure the recorded instants contradict).
fn lease_document() -> Script {
    let mut source = Script::new("lease", "-", "ExecutionLease");
    source
        .create("execution", lease_args(""))
        .call("renew", j("[T0+30000,T0+90000]"))
        .call("close", j(r#"["released",T0+45000,"checkpoint"]"#))
        .call("toJSON", j("[]"));
    let document = source
        .steps
        .last()
        .and_then(|s| s.get("ok"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let with_state = |state: &str| {
        let mut doc = parse_state(document.as_bytes()).unwrap_or(Value::Null);
        if let Value::Object(o) = &mut doc {
            o.insert("state", Value::string(state));
        }
        text(&doc)
    };
    let mut s = Script::new("lease", "lease.document", "ExecutionLease");
    s.create(
        "document",
        Value::Array(vec![Value::string(document.clone())]),
    )
    .call("state", j("[]"))
    .call("toJSON", j("[]"))
    .create("document", Value::Array(vec![Value::string("{")]))
    .create(
        "document",
        Value::Array(vec![Value::string(with_state("paused"))]),
    )
    .create(
        "document",
        Value::Array(vec![Value::string(with_state("expired"))]),
    );
    s
}

// ---- budget ledger (§12, §14) ---------------------------------------------------------------

fn ledger(s: &mut Script) {
    s.create("new", j("[]"))
        .call(
            "registerMission",
            j(r#"["m",{"financialMicrounits":100000000,"toolCalls":100,"modelTokens":1000},"USD",null]"#),
        )
        .call(
            "registerWorkItem",
            j(r#"["w1","m",{"financialMicrounits":60000000,"toolCalls":60,"modelTokens":600},null]"#),
        )
        .call(
            "registerMission",
            j(r#"["c",{"financialMicrounits":40000000,"toolCalls":40},null,"w1"]"#),
        )
        .call(
            "registerWorkItem",
            j(r#"["w2","c",{"financialMicrounits":30000000,"toolCalls":30},null]"#),
        )
        .call(
            "registerWorkItem",
            j(r#"["w3","c",{"financialMicrounits":20000000,"toolCalls":20},"w2"]"#),
        );
}

fn budget_ledger() -> Script {
    let mut s = Script::new("budget", "budget.ledger", "BudgetLedger");
    ledger(&mut s);
    s.call("size", j("[]"))
        .call("depth", j(r#"["work_item","w3"]"#))
        .call("currency", j(r#"["work_item","w3"]"#))
        .call(
            "consume",
            j(r#"["w3",{"financialMicrounits":1500000,"toolCalls":2}]"#),
        )
        .call("usage", j(r#"["mission","m"]"#))
        .call("usage", j(r#"["work_item","w2"]"#))
        .call("remaining", j(r#"["work_item","w3"]"#))
        .call("reserved", j(r#"["mission","c"]"#))
        .call("limit", j(r#"["mission","c"]"#))
        .call("consume", j(r#"["w3",{"toolCalls":18}]"#))
        .call(
            "consume",
            j(r#"["w3",{"financialMicrounits":1,"toolCalls":1}]"#),
        )
        .call("usage", j(r#"["work_item","w3"]"#))
        .call("consume", j(r#"["w2",{"modelTokens":1}]"#))
        .call("registerWorkItem", j(r#"["w4","m",{"toolCalls":41},null]"#))
        .call("consume", j(r#"["nope",{"toolCalls":1}]"#))
        .call("consume", j(r#"["w1",{}]"#))
        .call("registerWorkItem", j(r#"["w1","m",{},null]"#))
        .call(
            "registerMission",
            j(r#"["x",{"financialMicrounits":1},null,null]"#),
        )
        .call("registerMission", j(r#"["y",{},"EUR","w1"]"#))
        .call("registerWorkItem", j(r#"["w5","c",{},"w1"]"#))
        .call(
            "registerMission",
            j(r#"["big",{"toolCalls":9007199254740991},null,null]"#),
        )
        .call("remaining", j(r#"["mission","nope"]"#))
        .call("snapshot", j("[]"));
    s
}

fn budget_rebuild() -> Script {
    let mut source = Script::new("budget", "-", "BudgetLedger");
    ledger(&mut source);
    source
        .call(
            "consume",
            j(r#"["w3",{"financialMicrounits":7,"toolCalls":3}]"#),
        )
        .call("consume", j(r#"["w1",{"toolCalls":1}]"#))
        .call("snapshot", j("[]"));
    let snapshot = source
        .steps
        .last()
        .and_then(|s| s.get("ok"))
        .cloned()
        .unwrap_or(Value::Null);
    let edited = |edit: &dyn Fn(&mut Value)| {
        let mut doc = snapshot.clone();
        edit(&mut doc);
        Value::Array(vec![Value::string(text(&doc))])
    };
    let corrupt = edited(&|doc| {
        // One more tool call on Mission m than its subtree accounts for.
        edit_member(doc, "missions", &|missions| {
            if let Value::Array(missions) = missions {
                for m in missions.iter_mut() {
                    if m.get("missionId").and_then(Value::as_str) == Some("m") {
                        edit_member(m, "usage", &|usage| {
                            if let Value::Object(u) = usage {
                                u.insert("toolCalls", j("5"));
                            }
                        });
                    }
                }
            }
        });
    });
    let malformed = edited(&|doc| {
        edit_member(doc, "workItems", &|items| {
            if let Value::Array(items) = items
                && let Some(Value::Object(first)) = items.first_mut()
            {
                first.remove("limit");
            }
        });
    });
    let mut s = Script::new("budget", "budget.rebuild", "BudgetLedger");
    s.create(
        "rebuild",
        Value::Array(vec![Value::string(text(&snapshot))]),
    )
    .call("snapshot", j("[]"))
    .call("remaining", j(r#"["work_item","w3"]"#))
    .call("consume", j(r#"["w3",{"toolCalls":18}]"#))
    .call("consume", j(r#"["w3",{"toolCalls":17}]"#))
    .create("rebuild", corrupt)
    .create("rebuild", malformed)
    .create(
        "rebuild",
        Value::Array(vec![Value::string("{\"version\":1")]),
    );
    s
}

/// Edits one member of an object in place (member order is irrelevant: files are canonical).
fn edit_member(value: &mut Value, name: &str, edit: &dyn Fn(&mut Value)) {
    if let Value::Object(o) = value
        && let Some(mut member) = o.remove(name)
    {
        edit(&mut member);
        o.insert(name, member);
    }
}

// ---- delegation (§11.5) ---------------------------------------------------------------------

const GRANT: &str = r#"{"grantId":"grant-1","granteeAgentId":"agent-d","missionId":"m","groupId":"g","targetWorkItemId":"root","allowedCapabilities":[{"id":"tool.search","version":"2.0.0"}],"budget":{"currency":"USD","financialMicrounits":10000000,"modelTokens":1000,"toolCalls":10,"computeSeconds":100,"wallClockSeconds":100,"externalActions":2},"maxDescendantDepth":2,"granteeMembershipEpoch":4,"coordinatorEpoch":9,"grantedBy":"coord","grantedAt":T0,"expiresAt":T0+3600000}"#;
const CONTEXT: &str = r#"{"actorAgentId":"agent-d","membership":{"groupId":"g","active":true,"workDelegate":true,"epoch":4},"missionId":"m","groupId":"g","coordinatorEpoch":9,"coordinatorAgentId":"coord","organizationMaxDepth":3,"now":T0+1000}"#;
const TREE: &str = r#"{"root":{"missionId":"m"},"child":{"missionId":"m","parentWorkItemId":"root"},"grandchild":{"missionId":"m","parentWorkItemId":"child"},"outside":{"missionId":"m"}}"#;
const WORK: &str = r#"{"requiredCapabilities":[{"id":"tool.search","version":"2.1.0"}],"budget":{"financialMicrounits":2000000,"toolCalls":3},"currency":"USD"}"#;

fn grant(extra: &str) -> Value {
    Value::Array(vec![merged(GRANT, extra)])
}

fn ctx(extra: &str) -> String {
    text(&merged(CONTEXT, extra))
}

fn work(extra: &str) -> String {
    text(&merged(WORK, extra))
}

fn delegation_authorized() -> Script {
    let mut s = Script::new("delegation", "delegation.authorized", "DelegationAuthority");
    s.create("new", grant(""))
        .call("grant", j("[]"))
        .call("checkUse", j(&format!("[{},{TREE}]", ctx(""))))
        .call(
            "authorizeExisting",
            j(&format!("[{},{TREE},\"child\",{}]", ctx(""), work(""))),
        )
        .call(
            "authorizeExisting",
            j(&format!("[{},{TREE},\"child\",{}]", ctx(""), work(""))),
        )
        .call("charged", j("[]"))
        .call(
            "authorizeDescendant",
            j(&format!(
                "[{},{TREE},\"new-1\",\"child\",{}]",
                ctx(""),
                work("")
            )),
        )
        .call("remaining", j("[]"))
        .call("invalidated", j("[]"))
        .create("new", grant(""))
        .call("restoreAttribution", j(r#"["child",{"toolCalls":9}]"#))
        .call("restoreAttribution", j(r#"["child",{"toolCalls":9}]"#))
        .call("charged", j("[]"))
        .call(
            "authorizeDescendant",
            j(&format!(
                "[{},{TREE},\"n\",\"root\",{}]",
                ctx(""),
                work(r#"{"budget":{"toolCalls":2}}"#)
            )),
        );
    s
}

fn delegation_violations() -> Script {
    let mut s = Script::new("delegation", "delegation.violations", "DelegationAuthority");
    let existing = |c: &str, w: &str| j(&format!("[{},{TREE},\"child\",{}]", ctx(c), work(w)));
    s.create("new", grant(r#"{"expiresAt":T0}"#))
        .create("new", grant(r#"{"allowedCapabilities":[]}"#))
        .create("new", grant(""))
        .call(
            "checkUse",
            j(&format!("[{},{TREE}]", ctx(r#"{"actorAgentId":"other"}"#))),
        )
        .call(
            "checkUse",
            j(&format!("[{},{TREE}]", ctx(r#"{"groupId":"g2"}"#))),
        )
        .call(
            "checkUse",
            j(&format!("[{},{TREE}]", ctx(r#"{"now":T0-1}"#))),
        )
        .call(
            "authorizeExisting",
            j(&format!("[{},{TREE},\"outside\",{}]", ctx(""), work(""))),
        )
        .call(
            "authorizeDescendant",
            j(&format!(
                "[{},{TREE},\"deep\",\"grandchild\",{}]",
                ctx(""),
                work("")
            )),
        )
        .call(
            "authorizeDescendant",
            j(&format!(
                "[{},{TREE},\"d2\",\"child\",{}]",
                ctx(r#"{"organizationMaxDepth":1}"#),
                work("")
            )),
        )
        .call(
            "authorizeExisting",
            existing(
                "",
                r#"{"requiredCapabilities":[{"id":"tool.search","version":"1.9.0"}]}"#,
            ),
        )
        .call(
            "authorizeExisting",
            existing(
                "",
                r#"{"requiredCapabilities":[{"id":"tool.write","version":"2.0.0"}]}"#,
            ),
        )
        .call(
            "authorizeExisting",
            existing("", r#"{"budget":{"toolCalls":11}}"#),
        )
        .call("authorizeExisting", existing("", r#"{"currency":"EUR"}"#))
        .call(
            "authorizeDescendant",
            j(&format!(
                "[{},{TREE},\"child\",\"root\",{}]",
                ctx(""),
                work("")
            )),
        )
        .call("invalidated", j("[]"))
        .call("charged", j("[]"));
    s
}

/// Invalidating conditions latch: the refused use is refused again with the same kind even in
/// a valid context, and `invalidated` reports it.
fn delegation_invalidating() -> Script {
    let mut s = Script::new(
        "delegation",
        "delegation.invalidating",
        "DelegationAuthority",
    );
    let cases: [(&str, &str); 8] = [
        (r#"{"membership":{"groupId":"g","epoch":5}}"#, TREE),
        (r#"{"membership":null}"#, TREE),
        (
            r#"{"membership":{"groupId":"g","epoch":4,"workDelegate":false}}"#,
            TREE,
        ),
        (r#"{"coordinatorEpoch":10}"#, TREE),
        (r#"{"coordinatorAgentId":"coord2"}"#, TREE),
        (r#"{"now":T0+3600000}"#, TREE),
        ("", r#"{"child":{"missionId":"m"}}"#),
        (
            "",
            r#"{"root":{"missionId":"m","closed":true},"child":{"missionId":"m","parentWorkItemId":"root"}}"#,
        ),
    ];
    for (context, tree) in cases {
        let context = ctx(context);
        s.create("new", grant(""))
            .call("checkUse", j(&format!("[{context},{tree}]")))
            .call("checkUse", j(&format!("[{},{TREE}]", ctx(""))))
            .call("invalidated", j("[]"));
    }
    s
}

// ---- retries (§11.4) --------------------------------------------------------------------------

const RETRY: &str = r#"{"policy":{"maxAttempts":3,"backoff":"exponential","initialDelayMs":100,"maxDelayMs":150,"retryableFailures":["TIMEOUT"]},"deadline":T0+10000,"costBudget":{"toolCalls":5},"missionId":"urn:mission:1","workItemId":"urn:work:1","ownershipEpoch":1}"#;

fn retry(extra: &str) -> Value {
    Value::Array(vec![merged(RETRY, extra)])
}

/// Backoff, stable idempotency keys per logical operation, cost budgets, exhaustion.
fn retry_bounded() -> Script {
    let mut s = Script::new("retry", "retry.bounded", "RetryController");
    s.create("new", retry(""))
        .call("idempotencyKey", j(r#"["charge-card"]"#))
        .call("begin", j(r#"["charge-card",T0]"#))
        .call("begin", j(r#"["charge-card",T0]"#))
        .call("consume", j(r#"[{"toolCalls":2}]"#))
        .call("consume", j(r#"[{"toolCalls":4}]"#))
        .call("finish", j(r#"[{"success":false,"code":"TIMEOUT"},T0+10]"#))
        .call("begin", j(r#"["charge-card",T0+109]"#))
        .call("begin", j(r#"["charge-card",T0+110]"#))
        .call(
            "finish",
            j(r#"[{"success":false,"code":"TIMEOUT"},T0+120]"#),
        )
        .call("begin", j(r#"["charge-card",T0+270]"#))
        .call(
            "finish",
            j(r#"[{"success":false,"code":"TIMEOUT"},T0+280]"#),
        )
        .call("state", j("[]"))
        .call("begin", j(r#"["charge-card",T0+300]"#))
        .call("finish", j(r#"[{"success":true},T0+300]"#));
    s
}

/// The other ways a retry loop ends, and a policy the core refuses.
fn retry_endings() -> Script {
    let mut s = Script::new("retry", "retry.endings", "RetryController");
    s.create(
        "new",
        retry(r#"{"policy":{"maxAttempts":5,"backoff":"none","maxDelayMs":0,"retryableFailures":["TIMEOUT"]},"deadline":null}"#),
    )
    .call("begin", j(r#"["op",T0]"#))
    .call("finish", j(r#"[{"success":false,"code":"DENIED"},T0]"#))
    .call("state", j("[]"))
    .create(
        "new",
        retry(r#"{"policy":{"maxAttempts":2,"backoff":"none","maxDelayMs":0,"retryableFailures":[]},"deadline":null}"#),
    )
    .call("begin", j(r#"["op",T0]"#))
    .call("finish", j(r#"[{"success":true},T0]"#))
    .call("begin", j(r#"["op",T0+1]"#))
    .create(
        "new",
        retry(r#"{"policy":{"maxAttempts":2,"backoff":"none","maxDelayMs":0,"retryableFailures":[]},"deadline":T0}"#),
    )
    .call("begin", j(r#"["op",T0]"#))
    .create(
        "new",
        retry(r#"{"policy":{"maxAttempts":0,"backoff":"none","maxDelayMs":0,"retryableFailures":[]}}"#),
    );
    s
}

// ---- scheduler (§9.1, §17) ------------------------------------------------------------------

fn scheduler_admission() -> Script {
    let mut s = Script::new("scheduler", "scheduler.admission", "Scheduler");
    s.create(
        "new",
        j(r#"[{"capacitySlots":2,"maxWorkItems":4,"maxWorkItemsPerGroup":2,"allowedGroups":["g","h","z"],"groups":{"z":{"slotQuota":0}},"supportedCapabilities":[{"id":"tool.search","version":"2.1.0"}]}]"#),
    );
    for offer in [
        r#"{"workId":"a","groupId":"g"}"#,
        r#"{"workId":"a","groupId":"g"}"#,
        r#"{"workId":"a","groupId":"g","priority":5}"#,
        r#"{"workId":"b","groupId":"nope"}"#,
        r#"{"workId":"c","groupId":"z"}"#,
        r#"{"workId":"d","groupId":"g","slots":3}"#,
        r#"{"workId":"e","groupId":"g","requiredCapabilities":[{"id":"tool.search","version":"2.2.0"}]}"#,
        r#"{"workId":"e2","groupId":"g","requiredCapabilities":[{"id":"tool.search","version":"2.0.0"}]}"#,
        r#"{"workId":"f","groupId":"g","deadline":T0}"#,
        r#"{"workId":"g1","groupId":"h","eligibility":{"authorized":false}}"#,
        r#"{"workId":"g2","groupId":"h","eligibility":{"dependenciesReady":false}}"#,
        r#"{"workId":"g3","groupId":"h","eligibility":{"budgetAvailable":false}}"#,
        r#"{"workId":"g4","groupId":"g"}"#,
        r#"{"workId":"h1","groupId":"h"}"#,
        r#"{"workId":"h2","groupId":"h"}"#,
        r#"{"workId":"h3","groupId":"h"}"#,
    ] {
        s.call("admit", j(&format!("[{offer},T0]")));
    }
    s.call("stats", j("[]"))
        .call("schedule", j("[T0+1]"))
        .call("state", j(r#"["a"]"#))
        .call("state", j(r#"["h3"]"#))
        .call("disclose", j(r#"["h1",T0+1]"#));
    s
}

fn scheduler_errors() -> Script {
    let mut s = Script::new("scheduler", "scheduler.errors", "Scheduler");
    s.create("new", j(r#"[{"groups":{"g":{"weight":0}}}]"#))
        .create("new", j(r#"[{"capacitySlots":0}]"#))
        .create("new", j(r#"[{"capacitySlots":1}]"#))
        .call("admit", j(r#"[{"workId":"a","groupId":"g"},T0]"#))
        .call("admit", j(r#"[{"workId":"b","groupId":"g"},T0]"#))
        .call("schedule", j("[T0]"))
        .call(
            "apply",
            j(r#"["a",{"kind":"completed","generation":9},T0]"#),
        )
        .call(
            "apply",
            j(r#"["b",{"kind":"completed","generation":0},T0]"#),
        )
        .call(
            "apply",
            j(r#"["a",{"kind":"preemption_declined","generation":1},T0]"#),
        )
        .call(
            "apply",
            j(r#"["a",{"kind":"checkpoint_saved","generation":1,"checkpoint":{"checkpointId":"x","durable":false}},T0]"#),
        )
        .call("unblock", j(r#"["a",T0]"#))
        .call("cancel", j(r#"["zzz"]"#))
        .call(
            "apply",
            j(r#"["a",{"kind":"blocked","generation":1,"checkpoint":{"checkpointId":"k1"},"retryAt":T0+500,"reason":"needs input"},T0+10]"#),
        )
        .call("state", j(r#"["a"]"#))
        .call("schedule", j("[T0+10]"))
        .call(
            "apply",
            j(r#"["b",{"kind":"completed","generation":1},T0+600]"#),
        )
        .call("schedule", j("[T0+600]"))
        .call("generation", j(r#"["a"]"#))
        .call("cancel", j(r#"["a"]"#))
        .call("isTerminal", j(r#"["a"]"#))
        .call("forget", j(r#"["a"]"#))
        .call("isTerminal", j(r#"["a"]"#))
        .call("snapshot", j("[]"))
        .create("restore", j(r#"["{\"version\":1", null]"#));
    s
}
