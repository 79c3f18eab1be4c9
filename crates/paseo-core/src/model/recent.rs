//! The last few values a thread used, kept at hand in front of a costlier way to get them (a
//! lock, an allocation): checked in turn, the oldest dropped when full. The load's reading
//! threads ask for the same few configs and workspace ids once per record (docs/scale.md).

use std::cell::RefCell;

/// At most `N` values, for a `thread_local!`.
pub(crate) struct Recent<T, const N: usize>(RefCell<Vec<T>>);

impl<T, const N: usize> Recent<T, N> {
    pub(crate) const fn new() -> Self {
        Recent(RefCell::new(Vec::new()))
    }

    /// What `f` makes of the first value it accepts.
    pub(crate) fn find_map<U>(&self, f: impl FnMut(&T) -> Option<U>) -> Option<U> {
        self.0.borrow().iter().find_map(f)
    }

    /// Keeps `value`, dropping the oldest when `N` are kept.
    pub(crate) fn keep(&self, value: T) {
        let mut kept = self.0.borrow_mut();
        if kept.len() == N {
            kept.remove(0);
        }
        kept.push(value);
    }
}

#[cfg(test)]
mod tests {
    use super::Recent;

    #[test]
    fn keeps_the_last_n_and_finds_the_first_match() {
        let r: Recent<u32, 2> = Recent::new();
        r.keep(1);
        r.keep(2);
        assert_eq!(r.find_map(|v| (*v == 1).then_some("one")), Some("one"));
        r.keep(3);
        assert_eq!(
            r.find_map(|v| (*v == 1).then_some(())),
            None,
            "the oldest went"
        );
        assert_eq!(r.find_map(|v| (*v > 1).then_some(*v)), Some(2));
    }
}
