// Protobuf messages parsed onto arenas and handed over together, oldest first: parsing takes
// memory from a few blocks of up to 64 KiB instead of a heap allocation per (sub)message, and whoever holds
// the batch last frees it at once. At 1024 ranks the receiver's and the live feed's threads spent
// a fifth of their time in malloc and free, contending for glibc's arena lock. Messages are
// handed out as const references; a batch moves, it does not copy.
#pragma once

#include <google/protobuf/arena.h>

#include <cstddef>
#include <iterator>
#include <memory>
#include <vector>

namespace trellis::launcher {

template <typename Message>
class ArenaBatch {
public:
    class const_iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = Message;
        using difference_type = std::ptrdiff_t;
        using pointer = const Message *;
        using reference = const Message &;
        const_iterator() = default;
        explicit const_iterator(typename std::vector<Message *>::const_iterator at) : m_at(at) {}
        reference operator*() const { return **m_at; }
        pointer operator->() const { return *m_at; }
        const_iterator &operator++()
        {
            ++m_at;
            return *this;
        }
        const_iterator operator++(int) { return const_iterator(m_at++); }
        bool operator==(const const_iterator &) const = default;

    private:
        typename std::vector<Message *>::const_iterator m_at;
    };

    ArenaBatch() = default;
    ArenaBatch(ArenaBatch &&) noexcept = default;
    ArenaBatch &operator=(ArenaBatch &&) noexcept = default;
    ArenaBatch(const ArenaBatch &) = delete;
    ArenaBatch &operator=(const ArenaBatch &) = delete;

    // A new, empty message at the end, on the batch's newest arena (made when there is none).
    Message *add()
    {
        if (m_arenas.empty()) {
            google::protobuf::ArenaOptions options;
            // From 1 KiB (a batch of one message costs little held in a queue) up to 64 KiB
            // blocks, below glibc's mmap threshold: freed blocks are reused, not unmapped.
            options.start_block_size = 1024;
            options.max_block_size = 64 * 1024;
            m_arenas.push_back(std::make_unique<google::protobuf::Arena>(options));
        }
        Message *m = google::protobuf::Arena::CreateMessage<Message>(m_arenas.back().get());
        m_items.push_back(m);
        return m;
    }
    // Drops the last message from the batch (its memory goes with the batch's arenas).
    void removeLast() { m_items.pop_back(); }
    // Appends the messages of `from` that `keep` selects (keep[i] for its i-th), taking its arenas.
    void appendSome(ArenaBatch &&from, const std::vector<bool> &keep)
    {
        bool any = false;
        for (std::size_t i = 0; i < from.m_items.size(); ++i)
            if (i < keep.size() && keep[i]) {
                m_items.push_back(from.m_items[i]);
                any = true;
            }
        if (any) // the newest arena stays the one add() fills
            m_arenas.insert(m_arenas.begin(), std::make_move_iterator(from.m_arenas.begin()),
                            std::make_move_iterator(from.m_arenas.end()));
        from.clear();
    }
    void clear()
    {
        m_items.clear();
        m_arenas.clear();
    }

    std::size_t size() const { return m_items.size(); }
    bool empty() const { return m_items.empty(); }
    const Message &operator[](std::size_t i) const { return *m_items[i]; }
    const Message &back() const { return *m_items.back(); }
    const_iterator begin() const { return const_iterator(m_items.begin()); }
    const_iterator end() const { return const_iterator(m_items.end()); }

private:
    std::vector<std::unique_ptr<google::protobuf::Arena>> m_arenas;
    std::vector<Message *> m_items; // on m_arenas
};

} // namespace trellis::launcher
