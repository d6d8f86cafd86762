//! Reading several huge outputs at once. Rendering an output is one thread's work (a terminal's
//! state depends on every byte before), so a first call over several huge outputs, or a grep
//! over them, uses one thread per output, up to the machine's cores. Small outputs are read on
//! the calling thread: a thread would cost more than they do.

/// Outputs at least this long are read on a thread of their own.
pub(crate) const BIG_OUTPUT_BYTES: u64 = 1 << 20;

/// How many outputs are read at once.
pub(crate) fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

/// Items read together at most, so that the results held at once stay few.
pub(crate) const MAX_BATCH: usize = 16;

/// `items` cut into consecutive ranges read together: each holds up to [`workers`] big items
/// (per `big`) and at most [`MAX_BATCH`] items.
pub(crate) fn batches<T>(items: &[T], big: impl Fn(&T) -> bool) -> Vec<std::ops::Range<usize>> {
    let workers = workers();
    let mut ranges = Vec::new();
    let (mut start, mut n_big) = (0, 0);
    for (i, t) in items.iter().enumerate() {
        n_big += usize::from(big(t));
        if n_big == workers || i + 1 - start == MAX_BATCH {
            ranges.push(start..i + 1);
            (start, n_big) = (i + 1, 0);
        }
    }
    if start < items.len() {
        ranges.push(start..items.len());
    }
    ranges
}

/// `f` of every item, in order; the items `big` says are big run on threads of their own when
/// there are at least two of them. A panic in `f` is passed on.
pub(crate) fn map<T: Sync, R: Send>(
    items: &[T],
    big: impl Fn(&T) -> bool,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if items.iter().filter(|t| big(t)).count() < 2 {
        return items.iter().map(&f).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let started: Vec<_> = items
            .iter()
            .map(|t| big(t).then(|| scope.spawn(move || f(t))))
            .collect();
        items
            .iter()
            .zip(started)
            .map(|(t, thread)| match thread {
                Some(th) => th.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                None => f(t),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_their_items_order_whichever_thread_made_them() {
        let items: Vec<u64> = (0..40).collect();
        let got = map(
            &items,
            |&i| i % 3 == 0,
            |&i| {
                // The big ones take longer, so threads finish out of order.
                if i % 3 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(40 - i));
                }
                (i, std::thread::current().id())
            },
        );
        assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), items);
        let caller = std::thread::current().id();
        for (i, thread) in got {
            assert_eq!(thread == caller, i % 3 != 0, "item {i}");
        }
    }

    #[test]
    fn batches_cover_every_item_once_with_few_big_ones_each() {
        let items: Vec<bool> = (0..100).map(|i| i % 7 == 0 || i > 90).collect();
        let ranges = batches(&items, |&b| b);
        let mut next = 0;
        for r in &ranges {
            assert_eq!(r.start, next);
            assert!(!r.is_empty() && r.len() <= MAX_BATCH, "{r:?}");
            assert!(items[r.clone()].iter().filter(|&&b| b).count() <= workers());
            next = r.end;
        }
        assert_eq!(next, items.len());
        assert!(batches(&[] as &[bool], |&b| b).is_empty());
    }

    #[test]
    fn one_big_item_stays_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let got = map(&[1, 2], |&i| i == 1, |_| std::thread::current().id());
        assert_eq!(got, vec![caller, caller]);
    }
}
