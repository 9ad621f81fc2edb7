//! The engine's budget ledger, one store aggregate per account (§12 "the Group Authority MUST
//! persist an aggregate six-dimensional budget ledger").
//!
//! [`BudgetLedger`](super::BudgetLedger) keeps a whole tree in memory; the authoritative engine
//! instead stores each account under its own key (kind [`ACCOUNT_KIND`], ID `mission:<id>` or
//! `work_item:<id>`) and a Command reads and writes only the accounts it touches: the new
//! WorkItem and its Mission for an allocation, the WorkItem and its ancestry for a charge.
//! The same rules as the in-memory ledger:
//!
//! - a child's limits are **reserved** against its parent when it is created: the sum of the
//!   direct children's limits never exceeds the parent's, per dimension (§12 "the Coordinator
//!   allocates at most those limits"), else `BUDGET_EXCEEDED` naming the parent and dimension;
//! - a **charge** adds a nonzero delta to the WorkItem and every ancestor, all or nothing; the
//!   first account (item first) and dimension that would pass its limit is named
//!   (`BUDGET_EXCEEDED`, §12 "overflow in any one dimension rejects the whole transition");
//! - a dimension the budget leaves out has limit 0: nothing may be spent or allocated in it
//!   ("budgets are mandatory", §12; the reference treats an unset child dimension the same way).
//!
//! Every value is a safe integer (§2); the financial dimension counts micro-units of the
//! Mission's currency (`financialLimit` 12.5 → 12,500,000), exactly, never through binary64.

use missionweaveprotocol::json::{self, Decimal, Object, Value};

use crate::store::{AggregateKey, Blob};
use missionweaveprotocol_kernel::budget::{AccountId, AccountKind, BudgetError};
use missionweaveprotocol_kernel::resources::{Currency, Dimension, MAX_SAFE_INTEGER, Resources};
use missionweaveprotocol_kernel::snapshot_json::{resources_from_value, resources_to_value};

/// Store kind of a budget account.
pub const ACCOUNT_KIND: &str = "budget_account";

/// The store key of an account.
pub fn account_key(kind: AccountKind, id: &str) -> AggregateKey {
    AggregateKey::new(ACCOUNT_KIND, format!("{}:{id}", kind.as_str()))
}

/// One account of the persisted ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetAccount {
    /// Mission or WorkItem, and its ID.
    pub account: AccountId,
    /// The account its limits are reserved against (`None` for a root Mission).
    pub parent: Option<AccountId>,
    /// Currency of the financial dimension (the Mission's; WorkItems inherit it).
    pub currency: Option<Currency>,
    /// Limits (0 = nothing may be spent in that dimension).
    pub limit: Resources,
    /// Sum of the direct children's limits.
    pub reserved: Resources,
    /// Cumulative usage of this account and everything below it.
    pub usage: Resources,
}

impl BudgetAccount {
    /// A root Mission's account, with the limits its MissionOwner set.
    pub fn mission(mission_id: &str, budget: &Value) -> Result<Self, BudgetError> {
        let account = AccountId {
            kind: AccountKind::Mission,
            id: mission_id.to_owned(),
        };
        let (currency, limit) = wire_limits(budget, &account)?;
        Ok(Self {
            account,
            parent: None,
            currency,
            limit,
            reserved: Resources::ZERO,
            usage: Resources::ZERO,
        })
    }

    /// A WorkItem's account under `parent`, its limits reserved against the parent's
    /// unreserved remainder (the parent is updated in place; on error it is unchanged).
    pub fn work_item(
        parent: &mut BudgetAccount,
        work_item_id: &str,
        budget: &Value,
    ) -> Result<Self, BudgetError> {
        let account = AccountId {
            kind: AccountKind::WorkItem,
            id: work_item_id.to_owned(),
        };
        let (currency, limit) = wire_limits(budget, &account)?;
        if currency.is_some() && currency != parent.currency {
            return Err(BudgetError::Currency(account));
        }
        let reserved = parent
            .reserved
            .checked_add(&limit)
            .map_err(BudgetError::UnsafeInteger)?;
        if let Some(dimension) = reserved.first_exceeding(&parent.limit) {
            return Err(BudgetError::AllocationExceeded {
                parent: parent.account.clone(),
                dimension,
            });
        }
        parent.reserved = reserved;
        Ok(Self {
            account,
            parent: Some(parent.account.clone()),
            currency: parent.currency,
            limit,
            reserved: Resources::ZERO,
            usage: Resources::ZERO,
        })
    }

    /// What is left to spend here (limit − usage, per dimension).
    pub fn remaining(&self) -> Resources {
        self.limit.saturating_sub(&self.usage)
    }

    /// The store key.
    pub fn key(&self) -> AggregateKey {
        account_key(self.account.kind, &self.account.id)
    }

    /// The JSON form: `{account, kind, parent?, currency?, limit, reserved, usage}` with the six
    /// dimensions spelled as the reference's `ResourceUsage` members in camelCase.
    pub fn to_value(&self) -> Value {
        let mut o = Object::new();
        o.insert("kind", Value::string(self.account.kind.as_str()));
        o.insert("id", Value::string(&self.account.id));
        if let Some(parent) = &self.parent {
            let mut p = Object::new();
            p.insert("kind", Value::string(parent.kind.as_str()));
            p.insert("id", Value::string(&parent.id));
            o.insert("parent", Value::Object(p));
        }
        if let Some(c) = self.currency {
            o.insert("currency", Value::string(c.as_str()));
        }
        o.insert("limit", resources_to_value(&self.limit));
        o.insert("reserved", resources_to_value(&self.reserved));
        o.insert("usage", resources_to_value(&self.usage));
        Value::Object(o)
    }

    /// Canonical bytes of [`to_value`](Self::to_value), as stored.
    pub fn to_blob(&self) -> Blob {
        // Strings and safe integers only: always canonicalizable.
        Blob::from(json::canonical_bytes(&self.to_value()).unwrap_or_default())
    }

    /// Reads a stored account; `None` if the bytes are not one.
    pub fn from_stored(bytes: &[u8]) -> Option<Self> {
        let value = json::parse_state(bytes).ok()?;
        let id_of = |v: &Value| -> Option<AccountId> {
            let kind = match v.get("kind")?.as_str()? {
                "mission" => AccountKind::Mission,
                "work_item" => AccountKind::WorkItem,
                _ => return None,
            };
            Some(AccountId {
                kind,
                id: v.get("id")?.as_str()?.to_owned(),
            })
        };
        let currency = match value.get("currency") {
            None => None,
            Some(c) => Some(Currency::parse(c.as_str()?)?),
        };
        let parent = match value.get("parent") {
            None => None,
            Some(p) => Some(id_of(p)?),
        };
        let dims = |name: &str| resources_from_value(value.get(name)?, name).ok();
        Some(Self {
            account: id_of(&value)?,
            parent,
            currency,
            limit: dims("limit")?,
            reserved: dims("reserved")?,
            usage: dims("usage")?,
        })
    }
}

/// Charges `delta` to `chain` — a WorkItem's account followed by its ancestors up to the root
/// Mission — all or nothing (§12): on error no account changed.
pub fn charge(chain: &mut [BudgetAccount], delta: &Resources) -> Result<(), BudgetError> {
    if delta.is_zero() {
        return Err(BudgetError::ZeroDelta);
    }
    let mut after = Vec::with_capacity(chain.len());
    for account in chain.iter() {
        let usage = account
            .usage
            .checked_add(delta)
            .map_err(BudgetError::UnsafeInteger)?;
        if let Some(dimension) = usage.first_exceeding(&account.limit) {
            return Err(BudgetError::Exceeded {
                account: account.account.clone(),
                dimension,
            });
        }
        after.push(usage);
    }
    for (account, usage) in chain.iter_mut().zip(after) {
        account.usage = usage;
    }
    Ok(())
}

/// The limits of a `common.schema.json#/$defs/budget` object: `(currency, limits)`. The schema
/// already holds (the Mission and Work Contract documents are schema-checked), but the values
/// are re-read strictly: a financial limit finer than a micro-unit, or any value above 2^53 − 1,
/// is refused rather than rounded.
pub fn wire_limits(
    budget: &Value,
    account: &AccountId,
) -> Result<(Option<Currency>, Resources), BudgetError> {
    let mut limit = Resources::ZERO;
    let malformed = || BudgetError::Malformed(account.clone());
    let object = budget.as_object().ok_or_else(malformed)?;
    let currency = match object.get("currency") {
        None => None,
        Some(c) => Some(c.as_str().and_then(Currency::parse).ok_or_else(malformed)?),
    };
    for d in Dimension::ALL {
        let Some(value) = object.get(d.limit_field()) else {
            continue;
        };
        let Value::Number(n) = value else {
            return Err(malformed());
        };
        let amount = match d {
            Dimension::Financial => micro_units(n.as_text()),
            _ => n.as_u64(),
        }
        .ok_or_else(malformed)?;
        if amount > MAX_SAFE_INTEGER {
            return Err(BudgetError::UnsafeInteger(d));
        }
        limit.set(d, amount);
    }
    if limit.get(Dimension::Financial) > 0 && currency.is_none() {
        return Err(BudgetError::Currency(account.clone()));
    }
    Ok((currency, limit))
}

/// The six limits of a `common.schema.json#/$defs/budget` object as written, in
/// [`Dimension::ALL`] order: `None` where the object leaves a dimension out (the reference's
/// compact `ResourceBudget` keeps "not set" apart from 0), the financial one in exact
/// micro-units as [`wire_limits`] reads it. `None` for a malformed budget (not an object, a
/// non-number or non-integer limit, a limit above 2^53 − 1, a bad currency).
pub fn wire_dimensions(budget: &Value) -> Option<(Option<Currency>, [Option<u64>; 6])> {
    let object = budget.as_object()?;
    let currency = match object.get("currency") {
        None => None,
        Some(c) => Some(c.as_str().and_then(Currency::parse)?),
    };
    let mut limits = [None; 6];
    for (slot, d) in limits.iter_mut().zip(Dimension::ALL) {
        let Some(value) = object.get(d.limit_field()) else {
            continue;
        };
        let n = value.as_number()?;
        let amount = match d {
            Dimension::Financial => micro_units(n.as_text()),
            _ => n.as_u64(),
        }?;
        if amount > MAX_SAFE_INTEGER {
            return None;
        }
        *slot = Some(amount);
    }
    Some((currency, limits))
}

/// The inverse of [`wire_dimensions`]: the budget object with the dimensions that are set (and
/// `currency` when given), the financial limit written exactly as `micro-units / 10^6`
/// (12,500,000 → `12.5`). `None` if a limit is above 2^53 − 1 or a financial limit has no
/// currency (the schema requires one with it).
pub fn wire_budget(currency: Option<&Currency>, limits: &[Option<u64>; 6]) -> Option<Value> {
    let mut object = Object::new();
    if let Some(currency) = currency {
        object.insert("currency", Value::string(currency.as_str()));
    }
    for (limit, d) in limits.iter().zip(Dimension::ALL) {
        let Some(amount) = *limit else {
            continue;
        };
        if amount > MAX_SAFE_INTEGER {
            return None;
        }
        let number = match d {
            Dimension::Financial => {
                currency?;
                let fraction = format!("{:06}", amount % 1_000_000);
                let fraction = fraction.trim_end_matches('0');
                let text = if fraction.is_empty() {
                    (amount / 1_000_000).to_string()
                } else {
                    format!("{}.{fraction}", amount / 1_000_000)
                };
                json::parse(text.as_bytes()).ok()?
            }
            _ => Value::Number(json::Number::from_u64(amount)),
        };
        object.insert(d.limit_field(), number);
    }
    Some(Value::Object(object))
}

/// `text` (a JSON number) × 10^6 as an exact non-negative integer, if it is one.
fn micro_units(text: &str) -> Option<u64> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], text[at + 1..].parse::<i64>().ok()?),
        None => (text, 0),
    };
    let scaled = Decimal::from_json_number(&format!("{mantissa}e{}", exponent.checked_add(6)?));
    u64::try_from(scaled.to_i64()?).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn wire_dimensions_round_trip_exactly() {
        let budget =
            json::parse(br#"{"currency":"EUR","financialLimit":12.5,"toolCallLimit":0}"#).unwrap();
        let (currency, limits) = wire_dimensions(&budget).unwrap();
        assert_eq!(currency.as_ref().map(Currency::as_str), Some("EUR"));
        assert_eq!(limits, [Some(12_500_000), None, Some(0), None, None, None]);
        let back = wire_budget(currency.as_ref(), &limits).unwrap();
        assert!(back.json_eq(&budget));
        let whole = wire_budget(
            currency.as_ref(),
            &[Some(3_000_000), None, None, None, None, None],
        );
        assert_eq!(
            json::canonical_bytes(&whole.unwrap()).unwrap(),
            br#"{"currency":"EUR","financialLimit":3}"#.to_vec()
        );
    }

    #[test]
    fn malformed_budgets_are_refused() {
        for text in [
            &br#"[]"#[..],
            br#"{"toolCallLimit":"1"}"#,
            br#"{"toolCallLimit":1.5}"#,
            br#"{"financialLimit":0.0000001,"currency":"EUR"}"#,
            br#"{"toolCallLimit":9007199254740992}"#,
            br#"{"currency":"eur"}"#,
        ] {
            assert!(
                wire_dimensions(&json::parse(text).unwrap()).is_none(),
                "{text:?}"
            );
        }
        // A financial limit needs a currency; a limit above 2^53 − 1 is not a safe integer.
        assert!(wire_budget(None, &[Some(1), None, None, None, None, None]).is_none());
        let eur = Currency::parse("EUR");
        assert!(
            wire_budget(eur.as_ref(), &[None, Some(1 << 53), None, None, None, None]).is_none()
        );
    }

    #[test]
    fn micro_units_are_exact() {
        assert_eq!(micro_units("12.5"), Some(12_500_000));
        assert_eq!(micro_units("0"), Some(0));
        assert_eq!(micro_units("1e2"), Some(100_000_000));
        assert_eq!(micro_units("1.5E-6"), None, "finer than a micro-unit");
        assert_eq!(micro_units("0.000001"), Some(1));
        assert_eq!(micro_units("-1"), None);
        assert_eq!(micro_units("1e99999999999999999999"), None);
    }
}
