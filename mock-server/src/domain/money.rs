//! Money in whole kopecks, so that sums of reserves, charges and refunds are exact.

use serde::{Serialize, Serializer};

/// A rouble amount with more than two decimals: 400 at its member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{field} must have at most two decimals")]
pub struct FinerThanKopeck {
    /// The member of the request, such as `amountRub`.
    pub field: &'static str,
}

/// An amount in kopecks (1/100 rouble). The API speaks roubles with two decimals;
/// conversion happens only at the edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Kopecks(pub i64);

impl Kopecks {
    /// Nothing.
    pub const ZERO: Self = Self(0);

    /// Rounds a rouble amount to the nearest kopeck; non-finite input is zero.
    pub fn from_rub(rub: f64) -> Self {
        if rub.is_finite() {
            // `as` saturates at the bounds of i64, so absurd amounts cannot wrap.
            Self((rub * 100.0).round() as i64)
        } else {
            Self::ZERO
        }
    }

    /// A rouble amount as asked at the member `field` of a request, which may
    /// not be finer than a kopeck.
    pub fn exact(rub: f64, field: &'static str) -> Result<Self, FinerThanKopeck> {
        let kopecks = Self::from_rub(rub);
        if (kopecks.rub() - rub).abs() > 1e-9 {
            return Err(FinerThanKopeck { field });
        }
        Ok(kopecks)
    }

    /// The amount in roubles.
    pub fn rub(self) -> f64 {
        self.0 as f64 / 100.0
    }
}

/// An amount as the API and a snapshot write it: roubles.
impl<'de> serde::Deserialize<'de> for Kopecks {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        f64::deserialize(deserializer).map(Self::from_rub)
    }
}

impl std::ops::Add for Kopecks {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Self(self.0.saturating_add(rhs.0))
    }
}

impl std::ops::Sub for Kopecks {
    type Output = Self;
    fn sub(self, rhs: Self) -> Self {
        Self(self.0.saturating_sub(rhs.0))
    }
}

impl std::ops::AddAssign for Kopecks {
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

impl std::ops::SubAssign for Kopecks {
    fn sub_assign(&mut self, rhs: Self) {
        *self = *self - rhs;
    }
}

impl std::iter::Sum for Kopecks {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::ZERO, |a, b| a + b)
    }
}

/// Roubles with two decimals, as messages speak them: `2.50`.
impl std::fmt::Display for Kopecks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let whole = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:02}", whole / 100, whole % 100)
    }
}

/// Serialised as roubles, the unit of every money field of the contract.
impl Serialize for Kopecks {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.rub())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roubles_round_to_the_nearest_kopeck() {
        assert_eq!(Kopecks::from_rub(12.345), Kopecks(1235));
        assert_eq!(Kopecks::from_rub(0.1 + 0.2), Kopecks(30));
        assert_eq!(Kopecks::from_rub(f64::NAN), Kopecks::ZERO);
        assert_eq!(Kopecks::from_rub(1e300), Kopecks(i64::MAX));
    }

    #[test]
    fn an_amount_finer_than_a_kopeck_is_refused_at_its_member() {
        assert_eq!(Kopecks::exact(12.34, "amountRub"), Ok(Kopecks(1234)));
        assert_eq!(Kopecks::exact(0.1 + 0.2, "amountRub"), Ok(Kopecks(30)));
        let refused = Kopecks::exact(12.345, "amountRub").unwrap_err();
        assert_eq!(refused.field, "amountRub");
        assert_eq!(
            refused.to_string(),
            "amountRub must have at most two decimals"
        );
    }

    #[test]
    fn serialises_as_roubles() {
        assert_eq!(
            serde_json::to_string(&Kopecks(1250)).ok().as_deref(),
            Some("12.5")
        );
    }
}
